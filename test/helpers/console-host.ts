import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { copyPgliteTemplate } from './db-template.ts';
import { startServer, type ServerProcess } from './server-process.ts';
import { offerTopUps } from './wallets.ts';

/*
 * One console server for all the browser files of a run (test/browser/*.test.ts). Each file works in an account of
 * its own (test/helpers/browser.ts), so they need no server of their own: a start costs some 4 s of CPU, seven of
 * them a run. The run's set-up process owns it: it starts it when a file first asks (a run without browser files
 * never does) and stops it in its teardown, so a worker that is killed leaves nothing running.
 */

/** Where the shared console server offers x402 top-ups to (its facilitator is never called). */
export const TOP_UP_RECEIVER = '0x3333333333333333333333333333333333333333';

/** What a browser file is told: the server's address and the environment that reaches its storage (for the CLI). */
export interface SharedConsole {
  readonly url: string;
  readonly env: Record<string, string>;
}

export interface ConsoleHost {
  /** Where a worker asks for the shared console server (GET answers a SharedConsole, starting it the first time). */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves the shared console server's address to the workers on a loopback port. `templateDir`: the run's migrated
 * embedded database, copied for the server; without one (the PostgreSQL pass) the server unpacks the build's.
 */
export async function startConsoleHost(templateDir: string | undefined): Promise<ConsoleHost> {
  let starting: Promise<{ server: ServerProcess; shared: SharedConsole; dataDir: string }> | undefined;
  const start = async () => {
    const dataDir = templateDir
      ? await copyPgliteTemplate(templateDir)
      : mkdtempSync(join(tmpdir(), 'lagoon-browser-console-'));
    const env = { LAGOON_DATA_DIR: dataDir, ...offerTopUps(TOP_UP_RECEIVER) };
    try {
      const server = await startServer(env);
      return { server, dataDir, shared: { url: server.url, env } };
    } catch (error) {
      rmSync(dataDir, { recursive: true, force: true });
      throw error;
    }
  };
  const host = createServer((request, response) => {
    starting ??= start();
    starting.then(
      ({ shared }) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(shared)),
      (error: unknown) => response.writeHead(500).end(error instanceof Error ? error.message : String(error)),
    );
    request.resume();
  });
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
  const address = host.address();
  if (address === null || typeof address === 'string') throw new Error('the console host has no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    async close() {
      await new Promise((resolve) => host.close(resolve));
      const started = await starting?.catch(() => undefined);
      if (!started) return;
      if (started.server.child.exitCode === null) await started.server.stop();
      rmSync(started.dataDir, { recursive: true, force: true });
    },
  };
}

/** From a worker: the run's shared console server, started if no file has asked yet. */
export async function sharedConsole(hostUrl: string): Promise<SharedConsole> {
  const response = await fetch(hostUrl);
  if (!response.ok) throw new Error(`the shared console server did not start:\n${await response.text()}`);
  return (await response.json()) as SharedConsole;
}
