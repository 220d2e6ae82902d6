import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SERVER_ENTRY } from '../../build.ts';
import { TEST_DATABASE_URL } from '../helpers/db.ts';
import { withDatabase } from '../helpers/db-template.ts';
import { freePort } from '../helpers/free-port.ts';
import {
  childEnv,
  ROOT,
  serverStorage,
  shortLivedNode,
  startServer,
  type ServerProcess,
} from '../helpers/server-process.ts';
import { scaled } from '../helpers/time-scale.ts';

/*
 * The start tells what it does (issue 37, item 5): each phase and its duration, the first start's database
 * creation announced before it begins, a database it cannot reach named with host, port and error code, and the
 * settings a public deployment lacks in one warning.
 */

/** Runs the server until it exits by itself (a failed start), with its output and how long it took. */
async function failedStart(env: Record<string, string>): Promise<{ code: number | null; output: string; ms: number }> {
  const port = await freePort();
  const started = Date.now();
  const child = spawn(process.execPath, shortLivedNode(SERVER_ENTRY), {
    cwd: ROOT,
    env: childEnv({ HOST: '127.0.0.1', PORT: String(port), ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), scaled(30_000));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (exit) => resolve(exit)));
  clearTimeout(timer);
  return { code, output, ms: Date.now() - started };
}

describe('a start whose database cannot be reached', () => {
  it('names the host, the port and ECONNREFUSED, says what to check, and exits non-zero at once', async () => {
    const closed = await freePort();
    const { code, output } = await failedStart({
      DATABASE_URL: `postgres://lagoon:secret-password@127.0.0.1:${closed}/lagoon`,
    });
    expect(code).toBe(1);
    expect(output).toContain(`Cannot connect to PostgreSQL at 127.0.0.1:${closed}`);
    expect(output).toContain('ECONNREFUSED');
    expect(output).toContain('Check that PostgreSQL is running');
    expect(output).not.toContain('secret-password');
    expect(output).not.toContain('Migration (unknown) failed');
    // Killed by the timer (SIGKILL, code null) rather than exiting by itself would fail the first assertion.
  });

  it.runIf(TEST_DATABASE_URL)('names a database that does not exist (3D000) and how to create it', async () => {
    const url = withDatabase(TEST_DATABASE_URL ?? '', 'lagoon_no_such_database_37');
    const { code, output } = await failedStart({ DATABASE_URL: url });
    expect(code).toBe(1);
    expect(output).toContain('3D000');
    expect(output).toContain('database "lagoon_no_such_database_37" does not exist');
    expect(output).toContain('createdb lagoon_no_such_database_37');
  });
});

describe('a start that explains itself', () => {
  let server: ServerProcess | undefined;
  let remove: (() => Promise<void>) | undefined;

  afterAll(async () => {
    if (server && server.child.exitCode === null) await server.stop();
    await remove?.();
  });

  it(
    'reports each phase with its duration, and the missing public settings once (NODE_ENV=production)',
    async () => {
      const storage = await serverStorage('lagoon-startup-', { emptyDatabase: true });
      remove = storage.remove;
      const dataDir = join(storage.dataDir, 'data');
      server = await startServer({
        ...storage.env,
        LAGOON_DATA_DIR: dataDir,
        LOG_LEVEL: 'info',
        NODE_ENV: 'production',
      });
      await server.waitForOutput('"phase":"ready"');
      const lines = server
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg: string; phase?: string; ms?: number; missingSettings?: string[] });
      const phases = lines.filter((line) => line.phase !== undefined);
      if (TEST_DATABASE_URL) {
        expect(phases.find((line) => line.phase === 'database')?.msg).toMatch(/^connected to PostgreSQL at .+ in \d/);
        expect(phases.find((line) => line.phase === 'announce')?.msg).toMatch(/^applying \d+ migrations…$/);
      } else {
        expect(phases.find((line) => line.phase === 'announce')?.msg).toBe(
          `creating the embedded database in ${dataDir} from the build's template (first start only)…`,
        );
      }
      for (const name of ['database', 'migrations', 'services', 'ready']) {
        expect(phases.find((line) => line.phase === name)?.ms, name).toEqual(expect.any(Number));
      }
      expect(phases.find((line) => line.phase === 'ready')?.msg).toMatch(/^ready in [\d.]+ s \(database /);
      const warnings = lines.filter((line) => line.missingSettings);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]?.missingSettings).toEqual(['LAGOON_PUBLIC_URL (or LAGOON_SIWE_DOMAINS)']);
      expect(warnings[0]?.msg).toContain('LAGOON_PUBLIC_URL');
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      expect(await server.stop()).toBe(0);

      // The second start finds the database: no creation, no migrations, and (NODE_ENV=test) no public warning.
      server = await startServer({ ...storage.env, LAGOON_DATA_DIR: dataDir, LOG_LEVEL: 'info', NODE_ENV: 'test' });
      await server.waitForOutput('"phase":"ready"');
      expect(server.output()).not.toContain('first start only');
      expect(server.output()).not.toContain('applying');
      expect(server.output()).toContain('schema up to date');
      expect(server.output()).not.toContain('missingSettings');
      // Two server starts, each slow on a loaded host (the vitest default of 240 s was not enough at load 25).
    },
    scaled(240_000),
  );
});
