import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI_ENTRY, SERVER_ENTRY } from '../../build.ts';
import { createTestDatabase, pgliteDataDir, TEST_DATABASE_URL } from './db.ts';
import { freePort } from './free-port.ts';
import { keepChildOutput } from './test-logs.ts';
import { scaled } from './time-scale.ts';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Node's arguments for a server or CLI process a test starts: `entry` and `args` after V8's `--liftoff-only`. Such a
 * process lives seconds, too short for PGlite's optimizing WebAssembly tier to pay back its compile: without it a
 * server's start took 4.0 s of CPU instead of 6.1 s on a 2-core host (bench/RESULTS.md). Liftoff's code gives every
 * query the same answers; deployments keep V8's defaults.
 */
export const shortLivedNode = (entry: string, ...args: string[]): string[] => ['--liftoff-only', entry, ...args];

/**
 * The environment for a child process: this one's, minus database settings, plus `env`. Logs at info, as a
 * deployment does: every request line goes to the run's log scan (test/log-scan.ts) with the in-process apps' own.
 * Pictures run at nice 10, as docs/configuration.md advises for a host busy with other work: a test host may be.
 */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const { DATABASE_URL: _db, LAGOON_DATA_DIR: _dir, LAGOON_CONFIG: _cfg, ...rest } = process.env;
  return { ...rest, LOG_LEVEL: 'info', LAGOON_IMAGE_PRIORITY: 'low', ...env };
}

export interface ServerProcess {
  readonly url: string;
  readonly child: ChildProcess;
  output(): string;
  /** Waits until the output holds `text` (a line may reach the pipe after /healthz already answers). */
  waitForOutput(text: string): Promise<void>;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Starts the server as `npm start` runs it (the build, made by test/global-setup.ts) and waits until /healthz answers. */
export async function startServer(env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, shortLivedNode(SERVER_ENTRY), {
    cwd: ROOT,
    env: childEnv({ HOST: '127.0.0.1', PORT: String(port), ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    keepChildOutput('server', chunk);
  });
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  // A healthy start needs seconds; a loaded machine opens PGlite much more slowly.
  const deadline = Date.now() + scaled(55_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early (${child.exitCode}):\n${output}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not become healthy:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  return {
    url,
    child,
    output: () => output,
    waitForOutput: async (text) => {
      const until = Date.now() + scaled(10_000);
      while (!output.includes(text)) {
        if (Date.now() > until) throw new Error(`the server never printed ${text}:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/**
 * Runs the operator CLI as a separate process, as an operator would, with `stdin` (default empty) on its input: its
 * build (made by test/global-setup.ts from the same sources), which starts without tsx's cost.
 */
export async function runCliProcess(
  args: string[],
  env: Record<string, string>,
  stdin?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, shortLivedNode(CLI_ENTRY, ...args), {
    cwd: ROOT,
    env: childEnv(env),
    stdio: 'pipe',
  });
  child.stdin.end(stdin ?? '');
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  return { code, stdout, stderr };
}

/**
 * Where a server process keeps its data: a fresh data directory (PGlite), and with TEST_DATABASE_URL a fresh
 * PostgreSQL database too. `env` goes to the server and the CLI; `remove` deletes both.
 */
export async function serverStorage(
  prefix: string,
  options: { emptyDatabase?: boolean } = {},
): Promise<{ dataDir: string; env: Record<string, string>; remove(): Promise<void> }> {
  // A copy of the run's migrated database: the server starts as on any later day (~0.1 s to copy) instead of making
  // its data directory (unpacking the build's template, 0.5-2 s); the tests of a first start ask for an empty one.
  const copy = TEST_DATABASE_URL || options.emptyDatabase ? undefined : await pgliteDataDir();
  const dataDir = copy ?? mkdtempSync(join(tmpdir(), prefix));
  const env: Record<string, string> = { LAGOON_DATA_DIR: dataDir };
  let dropDatabase: (() => Promise<void>) | undefined;
  if (TEST_DATABASE_URL) {
    const database = await createTestDatabase({ empty: options.emptyDatabase });
    await database.close();
    env.DATABASE_URL = database.url!;
    dropDatabase = database.drop;
  }
  return {
    dataDir,
    env,
    async remove() {
      await dropDatabase?.();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
