import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import LongestFirst, { DurationsRecorder } from './test/file-durations.ts';
import { scaled } from './test/helpers/time-scale.ts';

const require = createRequire(import.meta.url);

/**
 * Files whose subject never depends on which database runs (pure functions, input validation before any query,
 * Node's HTTP parser, the tokenizer, document extraction workers, the background-removal model). They run in the
 * embedded-database pass only (the fuzz tests run in both: what an outside caller sends must be refused the same way
 * whichever database answers): the PostgreSQL pass (TEST_DATABASE_URL set) would repeat them unchanged, and CI's
 * whole run has a time budget (.ci/run). Every test of money, holds, leases and usage runs in both passes.
 */
const DATABASE_INDEPENDENT = [
  'test/unit/**',
  'test/e2e/long-input.test.ts',
  'test/e2e/client-error.test.ts',
  'test/e2e/text-parser.test.ts',
  'test/rest/text-parser-pool.test.ts',
  'test/rest/text-parser-refusals.test.ts',
  'test/rest/background-removal.test.ts',
  'test/rest/dashboard.test.ts',
  // A real browser over the console: what it shows comes through the API, whose money paths have their own tests.
  'test/browser/**',
  // Upstream gateways and engines, with no database at all; the schema's text; a server always on the embedded one.
  'test/providers/{chat-gateway,image-gateway,openai-compatible,openai-compatible-faults,simulator}.test.ts',
  'test/providers/simulator-jobs*.test.ts',
  'test/graphql/schema.test.ts',
  'test/db/{pglite-thread,embedded-template}.test.ts', // the embedded database's own thread and first start
  'test/db/types.test.ts', // the migrated schema's text, read off the embedded template
  'test/e2e/operator-config.test.ts',
  // Transports, clients, parsers and limits in front of the services: the same code whichever database answers.
  'test/e2e/{graphql-ws,real-clients,original-newer-clients,tracing}.test.ts',
  'test/rest/{body-limits,picture-inputs}.test.ts',
  'test/graphql/limits.test.ts',
];

const SOURCES = fileURLToPath(new URL('./src/', import.meta.url));
const BUILT_RUNTIME_FILES = fileURLToPath(new URL('./test/helpers/built-runtime-files.ts', import.meta.url));

/** The sources' src/runtime-files.ts becomes test/helpers/built-runtime-files.ts: their threads run the build. */
const threadsFromTheBuild = {
  name: 'lagoon-threads-from-the-build',
  enforce: 'pre' as const,
  resolveId: (source: string, importer: string | undefined) =>
    importer?.startsWith(SOURCES) && source.endsWith('/runtime-files.ts') ? BUILT_RUNTIME_FILES : null,
};

export default defineConfig({
  plugins: [threadsFromTheBuild],
  resolve: {
    // One graphql copy for Pothos, yoga and tests ("Cannot use GraphQLSchema from another module or realm").
    alias: { graphql: require.resolve('graphql') },
  },
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...(process.env.TEST_DATABASE_URL ? DATABASE_INDEPENDENT : [])],
    globalSetup: ['test/global-setup.ts'],
    // Stretched by the machine's load when the run starts (test/helpers/time-scale.ts): no test assumes a quiet host.
    testTimeout: scaled(30_000),
    hookTimeout: scaled(60_000),
    // expect.poll (a page showing a mutation's result, a write landing): 1 s by default, too short on a busy host.
    expect: { poll: { timeout: scaled(10_000) } },
    pool: 'forks',
    // Files share each worker's module cache: the app's import costs 2–3 s, paid once per worker, not per file.
    isolate: false,
    // PGlite pass: three on two cores, as much of a file's time is waiting (server processes, real-time deadlines,
    // the database thread), which a third worker fills (800 -> 706 s on a 2-core host, bench/RESULTS.md). The
    // PostgreSQL pass stays at the two it was measured with.
    maxWorkers: process.env.TEST_DATABASE_URL ? 2 : 3,
    sequence: { sequencer: LongestFirst },
    reporters: ['default', ...(process.env.LAGOON_RECORD_DURATIONS === '1' ? [new DurationsRecorder()] : [])],
  },
});
