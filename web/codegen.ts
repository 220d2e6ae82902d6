import { generate } from '@graphql-codegen/cli';
import { fileURLToPath } from 'node:url';

/*
 * The console's typed operations (web/src/gql/, committed; `npm run codegen:check` fails when it is stale): every
 * `graphql(...)` call under web/src is checked against schema/schema.graphql and given its result and variables
 * types. Run by `npm run codegen` after the SDL is printed.
 */
const root = fileURLToPath(new URL('../', import.meta.url));

await generate(
  {
    cwd: root,
    schema: 'schema/schema.graphql',
    documents: ['web/src/**/*.{ts,tsx}', '!web/src/gql/**'],
    ignoreNoDocuments: true,
    silent: true,
    generates: {
      'web/src/gql/': {
        preset: 'client',
        presetConfig: { fragmentMasking: false },
        config: {
          // String unions instead of TypeScript enums: no enum objects in the bundle.
          enumsAsTypes: true,
          useTypeImports: true,
          skipTypename: false,
          scalars: {
            DateTime: 'string',
            Decimal: 'string',
            JSON: 'unknown',
            JSONObject: 'Record<string, unknown>',
            File: 'File',
          },
        },
      },
    },
  },
  true,
);
