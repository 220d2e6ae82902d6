/*
 * Files Lagoon reads or loads by path at run time. From the TypeScript sources (tsx, vitest) they are the files
 * in the repository; `npm start` runs the build instead (build.ts: src/main.ts bundled into dist/main.js, the
 * migrations and the extraction worker compiled beside it), where this module is part of dist/main.js.
 */
const compiled = import.meta.url.endsWith('.js');

/** The package manifest (for the version); one level up from both src/ and dist/. */
export const PACKAGE_JSON = new URL('../package.json', import.meta.url);

/** The directory of the migration modules (named by sequence: src/db/migration-names.ts). */
export const MIGRATIONS_DIR = new URL(compiled ? './migrations/' : '../migrations/', import.meta.url);

/** The module run by each document extraction worker thread; TypeScript needs tsx registered in the thread. */
export const EXTRACT_WORKER = compiled
  ? { url: new URL('./extract-worker.js', import.meta.url), typescript: false }
  : { url: new URL('./augment/extract/worker.ts', import.meta.url), typescript: true };

/** The module run by the token counting thread (src/token-count-pool.ts). */
export const TOKEN_WORKER = compiled
  ? { url: new URL('./token-worker.js', import.meta.url), typescript: false }
  : { url: new URL('./token-worker.ts', import.meta.url), typescript: true };

/** The module run by each eSpeak NG speech thread (src/providers/speech/espeak-pool.ts). */
export const ESPEAK_WORKER = compiled
  ? { url: new URL('./espeak-worker.js', import.meta.url), typescript: false }
  : { url: new URL('./providers/speech/espeak-worker.ts', import.meta.url), typescript: true };

/** The module run by the picture thread (src/providers/image/picture-thread.ts). */
export const PICTURE_WORKER = compiled
  ? { url: new URL('./picture-worker.js', import.meta.url), typescript: false }
  : { url: new URL('./providers/image/picture-worker.ts', import.meta.url), typescript: true };

/** The module run by the embedded database's thread (src/db/pglite-thread.ts). */
export const PGLITE_WORKER = compiled
  ? { url: new URL('./pglite-worker.js', import.meta.url), typescript: false }
  : { url: new URL('./db/pglite-worker.ts', import.meta.url), typescript: true };

/**
 * The migrated embedded database the build makes (src/db/embedded-template.ts), which a first start on an empty data
 * directory loads instead of running initdb; the manifest beside it names its migrations. Always the build's.
 */
export const EMBEDDED_TEMPLATE = {
  tarball: new URL(compiled ? './pgdata-template.tar.gz' : '../dist/pgdata-template.tar.gz', import.meta.url),
  manifest: new URL(compiled ? './pgdata-template.json' : '../dist/pgdata-template.json', import.meta.url),
};

/**
 * The tokenizer's vocabulary as JSON (build.ts writes it from gpt-tokenizer's own): parsed as JSON in ~80 ms where the
 * package's 2.4 MB JavaScript module takes ~300 ms to compile and run. Always the build's.
 */
export const TOKENIZER_RANKS = new URL(compiled ? './o200k_base.json' : '../dist/o200k_base.json', import.meta.url);

/** The built web console served at /dashboard (web/build.ts writes it; `npm run build` runs it). */
export const CONSOLE_DIR = new URL(compiled ? './web/' : '../dist/web/', import.meta.url);
