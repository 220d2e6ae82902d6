import SchemaBuilder from '@pothos/core';
import DataloaderPlugin from '@pothos/plugin-dataloader';
import ErrorsPlugin from '@pothos/plugin-errors';
import RelayPlugin from '@pothos/plugin-relay';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import SimpleObjectsPlugin from '@pothos/plugin-simple-objects';
import { AdminKeyRequiredError, AuthenticationError } from '../src/errors.ts';
import type { GraphQLContext } from './context.ts';

export interface JsonObject {
  [key: string]: unknown;
}

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  AuthScopes: { account: boolean; admin: boolean; operator: boolean };
  Scalars: {
    DateTime: { Input: Date; Output: Date };
    Decimal: { Input: string; Output: string };
    JSON: { Input: unknown; Output: unknown };
    JSONObject: { Input: JsonObject; Output: JsonObject };
    /** A file of a GraphQL multipart request (Yoga parses the upload into a web File). */
    File: { Input: File; Output: never };
  };
  DefaultFieldNullability: false;
}>({
  plugins: [ScopeAuthPlugin, ErrorsPlugin, DataloaderPlugin, RelayPlugin, SimpleObjectsPlugin],
  relay: {},
  defaultFieldNullability: false,
  scopeAuth: {
    authScopes: (context) => ({
      account: context.auth.kind === 'apiKey' || context.auth.kind === 'wallet',
      admin: context.auth.kind === 'apiKey' && context.auth.apiKey.type === 'ADMIN',
      // Only an operator token (`lagoon operator-tokens create`): no account key or wallet, whatever its type.
      operator: context.auth.kind === 'operator' && context.auth.operatorToken !== undefined,
    }),
    unauthorizedError: (_parent, context) =>
      context.auth.kind === 'apiKey'
        ? new AdminKeyRequiredError()
        : new AuthenticationError('Authentication required: send Authorization: Bearer <API key>'),
  },
  errors: { defaultTypes: [] },
});

builder.queryType({ description: 'Reads: catalog, characters, account, API keys.' });
builder.mutationType({ description: 'Changes to the caller’s account.' });
builder.subscriptionType({ description: 'Live updates, over SSE at /graphql/stream (graphql-sse).' });
