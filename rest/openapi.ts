import { z } from 'zod';
import type { Route } from './router.ts';

type JsonSchema = Record<string, unknown>;

const toSchema = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, {
    io,
    unrepresentable: 'any',
    target: 'draft-2020-12',
  }) as JsonSchema;
  return rest;
};

const ErrorBody = z.object({
  error: z.string(),
  code: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
  issues: z.array(z.object({ path: z.array(z.union([z.string(), z.number()])), message: z.string() })).optional(),
});

/** OpenAPI 3.1 for the REST routes, built from the same zod schemas that validate their requests. */
export function buildOpenApiDocument(routes: readonly Route[], info: { version: string }): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = `/api/v1${route.path.replace(/:([A-Za-z_]+)\*?/g, '{$1}')}`;
    const pathParams = [...route.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    const queryParams = route.doc.query ? queryParameters(route.doc.query) : [];
    const operation: Record<string, unknown> = {
      summary: route.doc.summary,
      operationId: `${route.method.toLowerCase()}${route.path.replace(/[/:_-](\w)/g, (_m, c: string) => c.toUpperCase())}`,
      tags: route.doc.tags ?? [],
      parameters: [...pathParams, ...queryParams],
      responses: {
        200: {
          description: route.doc.responseDescription ?? 'Success',
          ...(route.doc.response
            ? { content: { 'application/json': { schema: toSchema(route.doc.response, 'output') } } }
            : {}),
        },
        default: {
          description: 'Error',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        },
      },
      ...(route.access === 'public' ? { security: [] } : {}),
      ...(route.access === 'wallet' ? { security: [{ signInWithX: [] }] } : {}),
      ...(route.access === 'account' ? { security: [{ bearerAuth: [] }, { signInWithX: [] }] } : {}),
      ...(route.doc.body
        ? {
            requestBody: {
              required: true,
              content: {
                [route.doc.bodyContentType ?? 'application/json']: { schema: toSchema(route.doc.body, 'input') },
              },
            },
          }
        : {}),
    };
    paths[path] = { ...(paths[path] ?? {}), [route.method.toLowerCase()]: operation };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Lagoon API',
      version: info.version,
      description: 'REST compatibility layer of Lagoon (GraphQL at /graphql).',
    },
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }],
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API key>' },
        signInWithX: {
          type: 'apiKey',
          in: 'header',
          name: 'SIGN-IN-WITH-X',
          description: 'Wallet sign-in: base64 JSON {address, message, signature, timestamp, chainId} (docs/api.md)',
        },
      },
      schemas: { Error: toSchema(ErrorBody, 'output') },
    },
    paths,
  };
}

function queryParameters(schema: z.ZodType): Record<string, unknown>[] {
  const json = toSchema(schema, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: 'query',
    required: json.required?.includes(name) ?? false,
    schema: property,
    ...(typeof property.description === 'string' ? { description: property.description } : {}),
  }));
}
