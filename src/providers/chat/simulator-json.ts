import { stringFor, type Rng } from './simulator-text.ts';

/*
 * Generates a value that satisfies a JSON Schema, for the simulator's structured output and tool arguments.
 * Covers what chat clients send in practice: objects (required and optional properties, additionalProperties),
 * string (enum, const, length, common formats), number / integer (bounds, multipleOf), boolean, null, arrays
 * (items, prefixItems, min/maxItems), anyOf / oneOf (first usable branch), allOf (merged), $ref into
 * $defs / definitions, and type lists. `pattern` is not interpreted.
 */

type Schema = { [key: string]: unknown };
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const MAX_DEPTH = 8;

const asSchema = (value: unknown): Schema =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Schema) : {};
const numberOr = (value: unknown, fallback: number | undefined): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : fallback;

export function valueForSchema(schema: unknown, rng: Rng, topic: readonly string[]): Json {
  const root = asSchema(schema);
  return generate(root, root, rng, topic, undefined, 0);
}

function resolveRef(root: Schema, ref: string): Schema {
  if (!ref.startsWith('#')) return {};
  const path = ref
    .slice(1)
    .split('/')
    .filter(Boolean)
    .map((part) => decodeURIComponent(part.replaceAll('~1', '/').replaceAll('~0', '~')));
  let node: unknown = root;
  for (const part of path) node = asSchema(node)[part];
  return asSchema(node);
}

function generate(
  schemaIn: Schema,
  root: Schema,
  rng: Rng,
  topic: readonly string[],
  name: string | undefined,
  depth: number,
): Json {
  let schema = schemaIn;
  if (typeof schema.$ref === 'string') schema = { ...resolveRef(root, schema.$ref), ...withoutKey(schema, '$ref') };
  if ('const' in schema) return schema.const as Json;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return rng.pick(schema.enum) as Json;
  const allOf = Array.isArray(schema.allOf)
    ? schema.allOf
        .map(asSchema)
        .map((part) =>
          typeof part.$ref === 'string' ? { ...resolveRef(root, part.$ref), ...withoutKey(part, '$ref') } : part,
        )
    : [];
  if (allOf.length > 0)
    return generate(mergeAll([withoutKey(schema, 'allOf'), ...allOf]), root, rng, topic, name, depth);
  const branches = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (branches && branches.length > 0) {
    // The first branch that is not just `null` (optional fields are often `anyOf: [X, {type: null}]`).
    const branch = branches.map(asSchema).find((b) => b.type !== 'null') ?? asSchema(branches[0]);
    return generate({ ...withoutKey(withoutKey(schema, 'anyOf'), 'oneOf'), ...branch }, root, rng, topic, name, depth);
  }
  const type = chooseType(schema);
  if (depth >= MAX_DEPTH && (type === 'object' || type === 'array')) return type === 'object' ? {} : [];
  switch (type) {
    case 'null':
      return null;
    case 'boolean':
      return rng.chance(0.5);
    case 'integer':
    case 'number':
      return numberFor(schema, type === 'integer', rng);
    case 'array':
      return arrayFor(schema, root, rng, topic, name, depth);
    case 'object':
      return objectFor(schema, root, rng, topic, depth);
    default:
      return stringForSchema(schema, rng, topic, name);
  }
}

function chooseType(schema: Schema): string {
  const type = schema.type;
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) return (type.find((t) => t !== 'null') ?? 'null') as string;
  if (schema.properties !== undefined || schema.required !== undefined || schema.additionalProperties !== undefined)
    return 'object';
  if (schema.items !== undefined || schema.prefixItems !== undefined) return 'array';
  if (schema.minimum !== undefined || schema.maximum !== undefined) return 'number';
  return 'string';
}

function objectFor(schema: Schema, root: Schema, rng: Rng, topic: readonly string[], depth: number): Json {
  const properties = asSchema(schema.properties);
  const required = new Set(
    Array.isArray(schema.required) ? schema.required.filter((key): key is string => typeof key === 'string') : [],
  );
  const out: { [key: string]: Json } = {};
  for (const [key, child] of Object.entries(properties)) {
    if (!required.has(key) && rng.chance(0.35)) continue;
    out[key] = generate(asSchema(child), root, rng, topic, key, depth + 1);
  }
  // Required keys without a property schema (allowed by JSON Schema): any string satisfies them.
  for (const key of required) if (!(key in out)) out[key] = stringFor(rng, key, topic);
  const minProperties = numberOr(schema.minProperties, 0) ?? 0;
  const extra = asSchema(schema.additionalProperties);
  for (let index = 0; Object.keys(out).length < minProperties && schema.additionalProperties !== false; index += 1) {
    out[`extra_${index + 1}`] = generate(extra, root, rng, topic, undefined, depth + 1);
  }
  return out;
}

function arrayFor(
  schema: Schema,
  root: Schema,
  rng: Rng,
  topic: readonly string[],
  name: string | undefined,
  depth: number,
): Json {
  const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems.map(asSchema) : [];
  const minItems = Math.max(numberOr(schema.minItems, 0) ?? 0, prefix.length);
  const maxItems = numberOr(schema.maxItems, Math.max(minItems, 3)) ?? 3;
  const count = Math.min(maxItems, Math.max(minItems, rng.int(1, 3)));
  const items = schema.items === false ? undefined : asSchema(schema.items);
  const out: Json[] = [];
  const seen = new Set<string>();
  for (let index = 0; index < count; index += 1) {
    const itemSchema = prefix[index] ?? items;
    if (!itemSchema) break;
    // uniqueItems: a few tries for a value not seen yet (enum- or boolean-only items may run out).
    let value = generate(itemSchema, root, rng, topic, name, depth + 1);
    for (let attempt = 0; schema.uniqueItems === true && seen.has(JSON.stringify(value)) && attempt < 8; attempt += 1) {
      value = generate(itemSchema, root, rng, topic, name, depth + 1);
    }
    if (schema.uniqueItems === true && seen.has(JSON.stringify(value)) && index >= minItems) break;
    seen.add(JSON.stringify(value));
    out.push(value);
  }
  return out;
}

function numberFor(schema: Schema, integer: boolean, rng: Rng): number {
  const exclusiveMin = numberOr(schema.exclusiveMinimum, undefined);
  const exclusiveMax = numberOr(schema.exclusiveMaximum, undefined);
  let low = numberOr(schema.minimum, exclusiveMin === undefined ? undefined : exclusiveMin + (integer ? 1 : 0.001));
  let high = numberOr(schema.maximum, exclusiveMax === undefined ? undefined : exclusiveMax - (integer ? 1 : 0.001));
  if (low === undefined && high === undefined) [low, high] = [1, 100];
  else if (low === undefined) low = (high as number) - 100;
  else if (high === undefined) high = low + 100;
  let lo = low as number;
  let hi = high as number;
  if (integer) [lo, hi] = [Math.ceil(lo), Math.floor(hi)];
  const step = numberOr(schema.multipleOf, undefined);
  if (step !== undefined && step > 0) {
    const first = Math.ceil(lo / step);
    const last = Math.floor(hi / step);
    return last >= first ? Number((rng.int(first, last) * step).toPrecision(12)) : lo;
  }
  if (integer) return hi >= lo ? rng.int(lo, hi) : lo;
  return Math.round((lo + rng.next() * (hi - lo)) * 100) / 100;
}

function stringForSchema(schema: Schema, rng: Rng, topic: readonly string[], name: string | undefined): string {
  let value: string;
  switch (schema.format) {
    case 'date-time':
      value = new Date(Date.UTC(2025, rng.int(0, 11), rng.int(1, 28), rng.int(0, 23), rng.int(0, 59)))
        .toISOString()
        .replace('.000', '');
      break;
    case 'date':
      value = new Date(Date.UTC(2025, rng.int(0, 11), rng.int(1, 28))).toISOString().slice(0, 10);
      break;
    case 'time':
      value = `${String(rng.int(0, 23)).padStart(2, '0')}:${String(rng.int(0, 59)).padStart(2, '0')}:00`;
      break;
    case 'email':
      value = `user${rng.int(1, 999)}@example.com`;
      break;
    case 'uri':
    case 'url':
      value = `https://example.com/${rng.pick(['guide', 'notes', 'docs'])}/${rng.int(1, 99)}`;
      break;
    case 'uuid':
      value = uuidFrom(rng);
      break;
    default:
      value = stringFor(rng, name, topic);
  }
  const minLength = numberOr(schema.minLength, 0) ?? 0;
  const maxLength = numberOr(schema.maxLength, undefined);
  while (value.length < minLength) value += value.length === 0 ? 'x' : ` ${value}`;
  if (maxLength !== undefined && value.length > maxLength) value = value.slice(0, maxLength);
  return value;
}

function uuidFrom(rng: Rng): string {
  const hex = Array.from({ length: 32 }, () => rng.int(0, 15).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
}

function withoutKey(schema: Schema, key: string): Schema {
  const copy = { ...schema };
  delete copy[key];
  return copy;
}

/** allOf: properties and required lists are combined; other keywords, the last one wins. */
function mergeAll(schemas: readonly Schema[]): Schema {
  const merged: Schema = {};
  const properties: Schema = {};
  const required = new Set<string>();
  for (const schema of schemas) {
    Object.assign(merged, schema);
    Object.assign(properties, asSchema(schema.properties));
    if (Array.isArray(schema.required))
      for (const key of schema.required) if (typeof key === 'string') required.add(key);
  }
  if (Object.keys(properties).length > 0) merged.properties = properties;
  if (required.size > 0) merged.required = [...required];
  return merged;
}
