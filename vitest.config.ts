import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // One graphql copy for Pothos, yoga and tests ("Cannot use GraphQLSchema from another module or realm").
    alias: { graphql: require.resolve('graphql') },
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: more workers only add PGlite start-up contention.
    maxWorkers: 2,
    reporters: process.env.CI ? ['default'] : ['default'],
  },
});
