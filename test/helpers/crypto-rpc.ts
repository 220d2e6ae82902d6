import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import type { DatabaseHandle } from '../../src/db/database.ts';
import { createLogger } from '../../src/logger.ts';
import { ADMIN_KEY } from './app.ts';
import { createTestDatabase } from './db.ts';
import { listenLocally } from './local-server.ts';
import { createAccountWithKey } from './services.ts';

/** A Lagoon app in-process for the crypto RPC tests, with its log lines captured (rule 9 is about the log). */
export interface RpcTestApp {
  readonly app: App;
  readonly logs: Record<string, unknown>[];
  /** POST /api/v1/crypto/rpc/{network}; `body` is sent as is when a string. */
  rpc(
    network: string,
    body: unknown,
    init?: { key?: string | null; headers?: Record<string, string> },
  ): Promise<Response>;
  fetch(path: string, init?: RequestInit & { key?: string | null }): Promise<Response>;
  /** A funded account (INFERENCE key) with helpers to read its USD balance and usage entries. */
  account(usd?: string): Promise<RpcTestAccount>;
  close(): Promise<void>;
}

export interface RpcTestAccount {
  readonly accountId: string;
  readonly secret: string;
  usd(): Promise<{ amount: bigint; reserved: bigint }>;
  usage(): Promise<
    {
      sku: string;
      model_id: string | null;
      model_type: string | null;
      unit_type: string | null;
      units: string;
      amount: bigint;
      price_per_unit_usd: string;
      request_id: string | null;
      notes: string;
    }[]
  >;
}

/**
 * Writes `operatorYaml` to a temporary LAGOON_CONFIG and starts the app on a fresh test database (or on
 * `database`, to run a second "process" against the same database).
 */
export async function startRpcTestApp(
  operatorYaml: string,
  env: Record<string, string> = {},
  database?: DatabaseHandle,
): Promise<RpcTestApp> {
  const dir = await mkdtemp(join(tmpdir(), 'lagoon-rpc-'));
  const configPath = join(dir, 'operator.yaml');
  await writeFile(configPath, operatorYaml);
  const owned = database ? undefined : await createTestDatabase();
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line.trim()) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const config = loadConfig({
    NODE_ENV: 'test',
    LAGOON_BOOTSTRAP_ADMIN_KEY: ADMIN_KEY,
    LAGOON_CONFIG: configPath,
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    ...env,
  });
  // A second "process" on a shared database must not close it when it stops.
  const shared = database ? { ...database, close: () => Promise.resolve() } : undefined;
  const app = await createApp(config, { database: shared ?? owned, logger: createLogger('info', sink) });

  // Over HTTP, through the listener `npm start` serves with (the RPC route runs on Node's own objects there).
  const server = await listenLocally(createServer(app.nodeListener));
  const fetchPath: RpcTestApp['fetch'] = (path, init = {}) => {
    const { key, ...rest } = init;
    const headers = new Headers(rest.headers);
    const secret = key === undefined ? ADMIN_KEY : key;
    if (secret) headers.set('authorization', `Bearer ${secret}`);
    return fetch(`${server.url}${path}`, { ...rest, headers });
  };
  return {
    app,
    logs,
    fetch: fetchPath,
    rpc: (network, body, init = {}) =>
      fetchPath(`/api/v1/crypto/rpc/${network}`, {
        method: 'POST',
        key: init.key,
        headers: { 'content-type': 'application/json', ...init.headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    async account(usd = '1') {
      const { accountId, secret } = await createAccountWithKey(app.services, {
        credit: usd === '0' ? {} : { USD: usd },
        type: 'INFERENCE',
      });
      return {
        accountId,
        secret,
        async usd() {
          await app.services.cryptoRpc.flush();
          const balance = (await app.services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD');
          return { amount: balance?.amount ?? 0n, reserved: balance?.reserved ?? 0n };
        },
        async usage() {
          await app.services.cryptoRpc.flush();
          return app.database.db
            .selectFrom('usage_entries')
            .select([
              'sku',
              'model_id',
              'model_type',
              'unit_type',
              'units',
              'amount',
              'price_per_unit_usd',
              'request_id',
              'notes',
            ])
            .where('account_id', '=', accountId)
            .orderBy('created_at')
            .execute();
        },
      };
    },
    async close() {
      await server.close();
      await app.close();
      await owned?.drop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface JsonRpcResponse {
  jsonrpc: string;
  id: unknown;
  result?: unknown;
  error?: { code: number; message: string };
}

export const rpcRequest = (method: string, params: unknown[] = [], id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method,
  params,
});
