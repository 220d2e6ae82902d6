import type { ThreadModule } from '../../src/worker-thread.ts';

/*
 * src/runtime-files.ts as the tests' sources see it (vitest.config.ts hands them this module): every worker thread
 * runs the build's JavaScript, as under `npm start`, instead of registering tsx in each new thread and loading its
 * sources through it (about 0.8 s of CPU more for an extraction thread). The run's set-up builds dist/ from the same
 * sources first (test/global-setup.ts), so it is never stale.
 */
export {
  CONSOLE_DIR,
  EMBEDDED_TEMPLATE,
  MIGRATIONS_DIR,
  PACKAGE_JSON,
  TOKENIZER_RANKS,
} from '../../src/runtime-files.ts';

const built = (file: string): ThreadModule => ({
  url: new URL(`../../dist/${file}`, import.meta.url),
  typescript: false,
});

export const EXTRACT_WORKER = built('extract-worker.js');
export const TOKEN_WORKER = built('token-worker.js');
export const ESPEAK_WORKER = built('espeak-worker.js');
export const PICTURE_WORKER = built('picture-worker.js');
export const PGLITE_WORKER = built('pglite-worker.js');
