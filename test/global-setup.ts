import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildAll } from '../build.ts';
import { startConsoleHost } from './helpers/console-host.ts';
import { prepareTemplate } from './helpers/db-template.ts';
import { logScanError } from './log-scan.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated database each test file clones (see test/helpers/db-template.ts). */
    lagoonTemplate: string;
    /** Where the browser files ask for the run's one console server (see test/helpers/console-host.ts). */
    lagoonConsoleHost: string;
  }
}

/**
 * Once per run: the build the end-to-end tests start (as `npm start` does) and the console it serves, one migrated
 * database that every test file clones instead of migrating its own, the browser files' one console server (started
 * when first asked for), and the directory every app the tests start logs to (the workers inherit
 * LAGOON_TEST_LOG_DIR; test/helpers/test-logs.ts). The teardown stops that server, drops the template and scans the
 * logs: a secret or a prompt in any line fails the run, naming the file and line (test/log-scan.ts).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const logDir = mkdtempSync(join(tmpdir(), 'lagoon-test-logs-'));
  process.env.LAGOON_TEST_LOG_DIR = logDir;
  const built = buildAll();
  const [template] = await Promise.all([prepareTemplate(built), built]);
  project.provide('lagoonTemplate', template.ref);
  const consoleHost = await startConsoleHost(template.kind === 'pglite' ? template.ref : undefined);
  project.provide('lagoonConsoleHost', consoleHost.url);
  return async () => {
    await consoleHost.close();
    await template.remove();
    const error = logScanError(logDir);
    if (error) {
      // A teardown's error alone is printed and the run still exits 0: the exit code is set too.
      process.exitCode = 1;
      throw error;
    }
    rmSync(logDir, { recursive: true, force: true });
  };
}
