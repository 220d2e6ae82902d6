import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { ensureEmbeddedTemplate } from './src/db/embedded-template.ts';
import { buildConsole } from './web/build.ts';

/** The server entry `npm start` runs, built by buildServer(). */
export const SERVER_ENTRY = 'dist/main.js';
/** The operator CLI, built beside it: the same commands as `npm run lagoon`, started without tsx (less than half the CPU). */
export const CLI_ENTRY = 'dist/cli.js';
/** The job worker process, built beside it: what `npm run worker` runs from the sources. */
export const WORKER_ENTRY = 'dist/worker.js';

/**
 * Compiles the server for `npm start` (its prestart runs this every time, so dist/ is never stale; it takes about
 * a second): src/main.ts bundled into dist/main.js with the packages left in node_modules, and beside it the
 * files the server loads by path, where src/runtime-files.ts looks for them. Plain JavaScript starts faster and
 * holds less memory than transpiling the sources in the server process with tsx. The operator CLI and the job
 * worker are built too (dist/cli.js, dist/worker.js: the tests run them); `npm run lagoon`, `npm run worker` and the
 * tests' own imports run the TypeScript sources.
 */
export async function buildServer(): Promise<void> {
  const root = fileURLToPath(new URL('./', import.meta.url));
  const out = join(root, 'dist');
  // A first start on the embedded database loads this instead of running initdb and every migration; made again
  // only when the migrations or PGlite changed (some 10 s then, in a child process of its own, from the sources:
  // alongside the bundling below), else this is a hash of a few files.
  const template = ensureEmbeddedTemplate(join(root, 'migrations'));
  const migrations = readdirSync(join(root, 'migrations'))
    .filter((file) => file.endsWith('.ts'))
    .map((file) => ({ in: join(root, 'migrations', file), out: `migrations/${file.slice(0, -'.ts'.length)}` }));
  const [result] = await Promise.all([
    build({
      entryPoints: [
        { in: join(root, 'src/main.ts'), out: 'main' },
        { in: join(root, 'src/cli/main.ts'), out: 'cli' },
        { in: join(root, 'src/worker.ts'), out: 'worker' },
        { in: join(root, 'src/augment/extract/worker.ts'), out: 'extract-worker' },
        { in: join(root, 'src/token-worker.ts'), out: 'token-worker' },
        { in: join(root, 'src/providers/speech/espeak-worker.ts'), out: 'espeak-worker' },
        { in: join(root, 'src/providers/image/picture-worker.ts'), out: 'picture-worker' },
        { in: join(root, 'src/db/pglite-worker.ts'), out: 'pglite-worker' },
        ...migrations,
      ],
      outdir: out,
      bundle: true,
      plugins: [bundleOnly(BUNDLED_PACKAGES)],
      // The entries share one copy of the bundled packages (kysely's, for the server and its migrations), in chunks
      // beside them: a chunk's import.meta.url finds the same files (src/runtime-files.ts) as an entry's.
      splitting: true,
      chunkNames: 'chunk-[hash]',
      platform: 'node',
      format: 'esm',
      target: 'node20.10',
      // No keepNames: it wraps every named closure in a __name() call, run on each request; nothing reads the names.
      keepNames: false,
      // For stack traces in source terms: NODE_OPTIONS=--enable-source-maps (off by default, it slows every .stack).
      sourcemap: 'linked',
      logLevel: 'warning',
      write: false,
    }),
    template,
  ]);
  // Another server may be starting from this dist/ right now: unchanged files stay untouched, changed ones are
  // replaced whole (rename), never seen half-written.
  for (const file of result.outputFiles) writeIfChanged(file.path, file.contents);
  // A migration deleted or renamed in the sources must not linger in the build and be applied from there.
  const built = new Set(result.outputFiles.map((file) => file.path));
  for (const file of readdirSync(join(out, 'migrations'))) {
    if (!built.has(join(out, 'migrations', file))) rmSync(join(out, 'migrations', file), { force: true });
  }
  // Chunks of earlier builds: their names change with their contents.
  for (const file of readdirSync(out).filter((name) => name.startsWith('chunk-'))) {
    if (!built.has(join(out, file))) rmSync(join(out, file), { force: true });
  }
  writeIfChanged(join(out, 'o200k_base.json'), Buffer.from(JSON.stringify(tokenizerRanks())));
}

function writeIfChanged(path: string, contents: Uint8Array): void {
  if (existsSync(path) && readFileSync(path).equals(contents)) return;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(`${path}.${process.pid}.tmp`, contents);
  renameSync(`${path}.${process.pid}.tmp`, path);
}

/** gpt-tokenizer's o200k vocabulary (a JavaScript module), for its JSON copy (src/runtime-files.ts TOKENIZER_RANKS). */
function tokenizerRanks(): unknown {
  const require = createRequire(import.meta.url);
  return (require('gpt-tokenizer/bpeRanks/o200k_base') as { default: unknown }).default;
}

/**
 * Packages compiled into the build rather than loaded from node_modules: pure ESM, shipped as hundreds of small files
 * each (viem some 360 at start, kysely 260), which Node would resolve, read and compile one by one at every start
 * (docs/performance.md "Start-up"). viem's own ESM dependencies come along; its WebSocket ones (isows, ws: CommonJS)
 * and every other package stay in node_modules. viem's chain list, imported on first use, becomes a chunk of its own.
 * graphql-yoga comes with its plugins and helpers, and `graphql` itself with every package of the server that
 * imports it (Pothos, yoga, graphql-armor, graphql-sse, graphql-ws): they must share one copy of it, and with all of
 * them compiled in, that copy is the build's (no CommonJS `graphql` of 129 files at start: a PostgreSQL restart
 * ~0.1 s less CPU, bench/RESULTS.md). A package left in node_modules that imported `graphql` would load a second.
 */
const BUNDLED_PACKAGES =
  /^(kysely|zod|jose|@pothos\/[^/]+|viem|ox|abitype|@noble\/[^/]+|@scure\/[^/]+|graphql-yoga|@graphql-yoga\/[^/]+|@graphql-tools\/[^/]+|@envelop\/[^/]+|@repeaterjs\/repeater|graphql|graphql-sse|graphql-ws|@escape\.tech\/graphql-armor-[^/]+)(\/|$)/;

/** An esbuild plugin: bare imports stay external (loaded from node_modules at run time) unless `bundled` matches. */
function bundleOnly(bundled: RegExp): Plugin {
  return {
    name: 'bundle-only',
    setup(builder) {
      builder.onResolve({ filter: /^[^./]/ }, (args) =>
        bundled.test(args.path) ? undefined : { path: args.path, external: true },
      );
    },
  };
}

/** The web console (web/), served at /dashboard from dist/web (src/runtime-files.ts). */
export const CONSOLE_DIR = fileURLToPath(new URL('./dist/web/', import.meta.url));

/** Everything `npm start` serves: the server (buildServer) and the console beside it. */
export async function buildAll(): Promise<void> {
  await Promise.all([buildServer(), buildConsole(CONSOLE_DIR)]);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await buildAll();
