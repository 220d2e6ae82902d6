// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const httpLayers = ['**/schema/**', '**/rest/**', 'graphql', 'graphql-yoga', '@pothos/*', '@whatwg-node/*'];

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', '.lagoon/**', 'coverage/**', 'web/src/gql/**', 'test-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: 'Read configuration through src/config.ts.',
        },
      ],
    },
  },
  {
    // Long functions hide their steps: past 80 lines, name the parts.
    files: ['src/**/*.ts', 'rest/**/*.ts', 'schema/**/*.ts', 'migrations/**/*.ts', 'web/**/*.{ts,tsx}'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }] },
  },
  {
    // The domain core knows nothing of HTTP or GraphQL: only the composition root may import those layers.
    files: ['src/**/*.ts'],
    ignores: ['src/main.ts', 'src/app.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: httpLayers,
              message:
                'src/ must not import the HTTP or GraphQL layers (docs/architecture.md#the-layers: imports go rest → src, schema → src).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['schema/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/rest/**', '**/src/app*', '**/src/main*'], message: 'schema/ may import src/ only.' },
          ],
        },
      ],
    },
  },
  {
    files: ['rest/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/schema/**', '**/src/app*', '**/src/main*', 'graphql', '@pothos/*'],
              message: 'rest/ may import src/ only.',
            },
          ],
        },
      ],
    },
  },
  {
    // Migrations are frozen in time: they import kysely and nothing of the app.
    files: ['migrations/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ group: ['../*', './*', '!kysely'], message: 'Migrations import only kysely.' }] },
      ],
    },
  },
  {
    files: ['src/config.ts', 'test/**/*.ts', 'bench/**/*.ts', 'vitest.config.ts', 'codegen.ts', '.ci/**/*.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    // The console runs in the browser: it reaches the server through GraphQL only.
    files: ['web/src/**/*.{ts,tsx}'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/src/*', '**/schema/*', '**/rest/*', 'graphql', 'node:*'],
              message: 'web/src talks to the server through GraphQL only (web/src/gql).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
