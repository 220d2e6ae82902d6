import { spawn, type ChildProcess } from 'node:child_process';
import { WORKER_ENTRY } from '../../build.ts';

/** Resolves once the child process has exited (at once if it already has). */
export const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => child.once('exit', () => resolve()));

/**
 * `npm run worker` processes (src/worker.ts, as built by the run's set-up) a test starts: `start` runs one with this
 * environment, one job at a time and no log but errors, plus `env`; `stopAll` ends those still running with SIGTERM
 * and waits for them.
 */
export function workerProcesses() {
  const workers: ChildProcess[] = [];
  return {
    start(env: Record<string, string>): ChildProcess {
      const child = spawn(process.execPath, [WORKER_ENTRY], {
        env: { ...process.env, LOG_LEVEL: 'silent', LAGOON_JOB_CONCURRENCY: '1', ...env },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      workers.push(child);
      return child;
    },
    async stopAll(): Promise<void> {
      for (const child of workers)
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM');
          await exited(child);
        }
    },
  };
}
