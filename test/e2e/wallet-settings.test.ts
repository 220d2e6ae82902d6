import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVER_ENTRY, WORKER_ENTRY } from '../../build.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import {
  childEnv,
  ROOT,
  runCliProcess,
  serverStorage,
  shortLivedNode,
  startServer,
  type ServerProcess,
} from '../helpers/server-process.ts';
import { newWallet, signInHeader } from '../helpers/wallets.ts';
import { scaled } from '../helpers/time-scale.ts';

/*
 * Wallet settings as an operator meets them, on real processes (issue 33, items 7 and 9): a receiver nothing can
 * settle stops the server, the worker and the CLI at start; a server with no sign-in settings accepts sign-ins for
 * its own listen address and not for the site a request's Host names.
 */

const RECEIVER = '0x4444444444444444444444444444444444444444';
const REFUSAL =
  'Invalid environment: LAGOON_X402_RECEIVER is set, but nothing could settle a top-up: set ' +
  'LAGOON_X402_FACILITATOR_URL, or LAGOON_BASE_RPC_URL and LAGOON_X402_SETTLEMENT_KEY (missing: LAGOON_BASE_RPC_URL, ' +
  'LAGOON_X402_SETTLEMENT_KEY) to settle on chain; or unset LAGOON_X402_RECEIVER to offer no top-ups';

/** Runs a process to its end (it must end by itself): its exit code and everything it printed. */
function runToExit(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // A process that started instead of refusing is stopped, so the assertion on its code fails rather than hangs.
  const guard = setTimeout(() => child.kill('SIGKILL'), 45_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(guard);
      resolve({ code, output });
    }),
  );
}

// Process start-ups on a busy machine (the worker and the CLI run through tsx): generous, never tight.
describe(`wallet settings on real processes (${testDatabaseKind})`, () => {
  let storage: Awaited<ReturnType<typeof serverStorage>>;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    storage = await serverStorage('lagoon-wallet-settings-');
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null) await server.stop();
    await storage?.remove();
  });

  it(
    'a receiver nothing can settle: the server, the worker and the CLI refuse to start, naming the settings',
    async () => {
      const env = { ...storage.env, HOST: '127.0.0.1', PORT: '0', LAGOON_X402_RECEIVER: RECEIVER };
      const [started, worker, cli] = await Promise.all([
        runToExit(shortLivedNode(SERVER_ENTRY), env),
        runToExit([WORKER_ENTRY], env),
        runCliProcess(['accounts', 'list'], env),
      ]);
      expect(started.code).not.toBe(0);
      expect(started.output).toContain(REFUSAL);
      expect(started.output).not.toContain('lagoon listening');
      expect(worker.code).not.toBe(0);
      expect(worker.output).toContain(REFUSAL);
      expect(cli.code).not.toBe(0);
      expect(cli.stderr).toContain(REFUSAL);
    },
    scaled(120_000),
  );

  it(
    'with no sign-in settings, accepts sign-ins for its listen address, not for the Host a request names',
    async () => {
      server = await startServer({ ...storage.env });
      const { port } = new URL(server.url);
      const balance = async (domain: string, host?: string) => {
        const wallet = newWallet();
        const header = await signInHeader(wallet, { domain });
        return new Promise<{ status: number; code: unknown }>((resolve, reject) => {
          const headers = { 'SIGN-IN-WITH-X': header, ...(host !== undefined && { host }) };
          request(`${server!.url}/api/v1/x402/balance/${wallet.address}`, { headers }, (res) => {
            let body = '';
            res.on('data', (chunk: Buffer) => (body += chunk.toString()));
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, code: (JSON.parse(body) as { code?: unknown }).code }),
            );
          })
            .on('error', reject)
            .end();
        });
      };
      expect(await balance(`127.0.0.1:${port}`)).toEqual({ status: 200, code: undefined });
      expect(await balance(`localhost:${port}`, 'evil.example')).toEqual({ status: 200, code: undefined });
      expect(await balance('evil.example', 'evil.example')).toEqual({ status: 401, code: 'SIWX_DOMAIN_MISMATCH' });
    },
    scaled(120_000),
  );
});
