import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { createLogger, type Logger } from '../../src/logger.ts';

/*
 * Every app and server the tests start writes its logs to LAGOON_TEST_LOG_DIR (set by test/global-setup.ts), and
 * the run's teardown scans them for secrets and prompts (test/log-scan.ts): a log line that carries one fails the run.
 */

/** Put in prompts by the tests that check the logs: no log line may ever carry it. */
export const PROMPT_MARKER = 'lagoon-prompt-marker-5e1f0c';

let shared: Logger | undefined;

/** The logger of apps and services the tests build: info and up to this process's file in the log directory. */
export function testLogger(): Logger {
  const dir = process.env.LAGOON_TEST_LOG_DIR;
  if (!dir) return createLogger('silent');
  // Synchronous writes: a worker that exits leaves nothing unwritten, at a few microseconds a line.
  shared ??= createLogger('info', pino.destination({ dest: join(dir, `app-${process.pid}.log`), sync: true }));
  return shared;
}

/** Appends a child process's output (a server the tests spawned) to its file in the log directory. */
export function keepChildOutput(name: string, chunk: Buffer | string): void {
  const dir = process.env.LAGOON_TEST_LOG_DIR;
  if (dir) appendFileSync(join(dir, `${name}-${process.pid}.log`), chunk);
}
