import { createServer } from 'node:http';
import { cpus } from 'node:os';
import { createServerAdapter } from '@whatwg-node/server';
import { createApp } from '../src/app.ts';
import { operator } from '../src/auth/auth-context.ts';
import { parseNano } from '../src/billing/money.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { createLogger } from '../src/logger.ts';
import { runLoad, type LoadResult } from './load.ts';

/**
 * Core platform benchmark: HTTP latency of authenticated REST and GraphQL reads at fixed concurrency over real
 * TCP, and money-core throughput (reserve → settle, each a transaction). Usage:
 *   npm run bench                         # embedded PGlite
 *   DATABASE_URL=postgres://… npm run bench
 */
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const ADMIN = 'bench-admin-key';

const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', LAGOON_BOOTSTRAP_ADMIN_KEY: ADMIN, LAGOON_DATA_DIR: 'memory://' });
const database = await openDatabase({ url: config.database.url, dataDir: 'memory://', poolSize: 20 });
const app = await createApp(config, { database, logger: createLogger('silent') });
const server = createServer(createServerAdapter((request: Request) => app.fetch(request)));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const address = server.address();
const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
const auth = { authorization: `Bearer ${ADMIN}` };

const ok = async (response: Promise<Response>) => {
  const r = await response;
  await r.arrayBuffer();
  return r.ok;
};

const rows: [string, LoadResult][] = [];
rows.push(['GET /healthz (no auth, no DB)', await runLoad(() => ok(fetch(`${base}/healthz`)), { connections, seconds })]);
rows.push(['GET /api/v1/api_keys (cached auth + 2 queries)', await runLoad(() => ok(fetch(`${base}/api/v1/api_keys`, { headers: auth })), { connections, seconds })]);
rows.push([
  'POST /graphql { account { balances } }',
  await runLoad(
    () => ok(fetch(`${base}/graphql`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ account { id balances { currency available } } }' }) })),
    { connections, seconds },
  ),
]);
rows.push(['GET /api/v1/api_keys with a bad key (negative cache)', await runLoad(() => fetch(`${base}/api/v1/api_keys`, { headers: { authorization: 'Bearer nope' } }).then(async (r) => (await r.arrayBuffer(), r.status === 401)), { connections, seconds })]);

// Money core: each iteration reserves 0.001 USD and settles it with one usage line (two transactions).
const services = app.services;
const { account } = await services.accounts.create(operator(), { name: 'bench' });
await services.accounts.credit(operator(), { accountId: account.id, currency: 'USD', amount: '1000000' });
const { secret } = await services.accounts.createKey(operator(), account.id, { apiKeyType: 'INFERENCE', description: 'bench' });
const keyAuth = await services.auth.authenticate({ authorization: `Bearer ${secret}` }, 'bench');
const cost = { usd: parseNano('0.001'), diem: parseNano('0.001') };
rows.push([
  'billing reserve → settle (in-process)',
  await runLoad(
    async () => {
      const reservation = await services.billing.reserve(keyAuth, cost);
      await services.billing.settle(reservation, { modelId: 'bench', modelType: 'LLM', unitType: 'tokens', lines: [{ sku: 'bench', units: '100', pricePerUnitUsd: '0.00001', cost }] });
      return true;
    },
    { connections, seconds },
  ),
]);

server.close();
await app.close();

const lines = [
  `Database: ${database.kind}; ${connections} concurrent; ${seconds} s per row; ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}; Node ${process.version}`,
  '',
  '| scenario | requests/s | p50 ms | p90 ms | p99 ms | errors |',
  '|---|---:|---:|---:|---:|---:|',
  ...rows.map(([name, r]) => `| ${name} | ${r.rps} | ${r.p50} | ${r.p90} | ${r.p99} | ${r.errors} |`),
];
console.log(lines.join('\n'));
