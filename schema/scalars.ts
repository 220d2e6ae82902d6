import { GraphQLError, Kind, type ValueNode } from 'graphql';
import { MoneyFormatError, parseNano, formatNano } from '../src/billing/money.ts';
import { builder, type JsonObject } from './builder.ts';

builder.scalarType('DateTime', {
  description: 'An ISO 8601 date-time in UTC, e.g. 2026-11-22T08:00:00.000Z.',
  serialize: (value) => value.toISOString(),
  parseValue: (value) => {
    const date = typeof value === 'string' ? new Date(value) : undefined;
    if (!date || Number.isNaN(date.getTime())) throw new GraphQLError('DateTime must be an ISO 8601 string');
    return date;
  },
});

builder.scalarType('Decimal', {
  description: 'An exact decimal amount of money as a string, e.g. "12.5" (input also accepts a number).',
  serialize: (value) => value,
  parseValue: (value) => {
    if (typeof value !== 'string' && typeof value !== 'number')
      throw new GraphQLError('Decimal must be a string or number');
    try {
      return formatNano(parseNano(value));
    } catch (error) {
      throw new GraphQLError(error instanceof MoneyFormatError ? error.message : 'Invalid decimal');
    }
  },
  parseLiteral: (node) => {
    if (node.kind !== Kind.STRING && node.kind !== Kind.INT && node.kind !== Kind.FLOAT)
      throw new GraphQLError('Decimal must be a string or number');
    try {
      return formatNano(parseNano(node.value));
    } catch (error) {
      throw new GraphQLError(error instanceof MoneyFormatError ? error.message : 'Invalid decimal');
    }
  },
});

const literalToJson = (node: ValueNode): unknown => {
  switch (node.kind) {
    case Kind.STRING:
    case Kind.ENUM:
      return node.value;
    case Kind.BOOLEAN:
      return node.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(node.value);
    case Kind.NULL:
      return null;
    case Kind.LIST:
      return node.values.map(literalToJson);
    case Kind.OBJECT:
      return Object.fromEntries(node.fields.map((field) => [field.name.value, literalToJson(field.value)]));
    default:
      throw new GraphQLError('Variables are not supported inside JSON literals');
  }
};

builder.scalarType('JSON', {
  description: 'Any JSON value.',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: literalToJson,
});

builder.scalarType('JSONObject', {
  description: 'A JSON object.',
  serialize: (value) => value,
  parseValue: (value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new GraphQLError('JSONObject must be an object');
    return value as JsonObject;
  },
  parseLiteral: (node) => {
    const value = literalToJson(node);
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new GraphQLError('JSONObject must be an object');
    return value as JsonObject;
  },
});

builder.scalarType('File', {
  description:
    'A file uploaded with a GraphQL multipart request (https://github.com/jaydenseric/graphql-multipart-request-spec).',
  serialize: () => {
    throw new GraphQLError('File is an input-only scalar');
  },
  parseValue: (value) => {
    // Yoga's multipart parser hands over its fetch implementation's File (not always the global class).
    const isFile =
      value instanceof File ||
      (typeof value === 'object' &&
        value !== null &&
        typeof (value as Blob).arrayBuffer === 'function' &&
        typeof (value as File).name === 'string');
    if (!isFile) throw new GraphQLError('Expected an uploaded file');
    return value as File;
  },
});
