import { createServer } from 'node:http';
import { cpus } from 'node:os';
import { createApp } from '../src/app.ts';
import { operator } from '../src/auth/auth-context.ts';
import { parseNano } from '../src/billing/money.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { createLogger } from '../src/logger.ts';
import { runLoad, type LoadResult } from './load.ts';

/**
 * Core platform benchmark: HTTP latency of authenticated REST and GraphQL reads at fixed concurrency over real
 * TCP, and money-core throughput (reserve → settle pairs, through the batched hot path). Usage:
 *   npm run bench                         # embedded PGlite
 *   DATABASE_URL=postgres://… npm run bench
 *   BENCH_ONLY=billing npm run bench      # only the rows whose name contains "billing"
 *   BENCH_CONNECTIONS=64 …                # more concurrent workers (the billing batches grow with them)
 */
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const only = process.env.BENCH_ONLY ?? '';
const ADMIN = 'bench-admin-key';

const config = loadConfig({
  ...process.env,
  LOG_LEVEL: 'silent',
  LAGOON_BOOTSTRAP_ADMIN_KEY: ADMIN,
  LAGOON_DATA_DIR: 'memory://',
});
const database = await openDatabase({ url: config.database.url, dataDir: 'memory://', poolSize: 20 });
const app = await createApp(config, { database, logger: createLogger('silent') });
// The listener `npm start` serves with (the hot routes on Node's own objects).
const server = createServer(app.nodeListener);
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
/** Per billing row: how long the charges settled during it took to be written once it ended (its backlog). */
const backlogs: string[] = [];
const measure = async (name: string, send: () => Promise<boolean>) => {
  if (name.includes(only)) rows.push([name, await runLoad(send, { connections, seconds })]);
};
const measureBilling = async (name: string, send: () => Promise<boolean>) => {
  if (!name.includes(only)) return;
  await measure(name, send);
  const started = performance.now();
  await app.services.billing.flush();
  backlogs.push(`${name}: settled charges all written ${Math.round(performance.now() - started)} ms after the row`);
};
await measure('GET /healthz (no auth, no DB)', () => ok(fetch(`${base}/healthz`)));
await measure('GET /api/v1/api_keys (cached auth + 2 queries)', () =>
  ok(fetch(`${base}/api/v1/api_keys`, { headers: auth })),
);
await measure('POST /graphql { account { balances } }', () =>
  ok(
    fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ account { id balances { currency available } } }' }),
    }),
  ),
);
await measure('GET /api/v1/api_keys with a bad key (negative cache)', () =>
  fetch(`${base}/api/v1/api_keys`, { headers: { authorization: 'Bearer nope' } }).then(
    async (r) => (await r.arrayBuffer(), r.status === 401),
  ),
);

// Money core: each iteration reserves 0.001 USD and settles it with one usage line. First every worker on one
// account (one hot balance row, the worst case), then calls spread round-robin over as many accounts as workers.
const services = app.services;
const cost = { usd: parseNano('0.001'), diem: parseNano('0.001') };
const usage = {
  modelId: 'bench',
  modelType: 'LLM',
  unitType: 'tokens',
  lines: [{ sku: 'bench', units: '100', pricePerUnitUsd: '0.00001', cost }],
};
const fundedKey = async (name: string) => {
  const { account } = await services.accounts.create(operator(), { name });
  await services.accounts.credit(operator(), { accountId: account.id, currency: 'USD', amount: '1000000' });
  const { secret } = await services.accounts.createKey(operator(), account.id, {
    apiKeyType: 'INFERENCE',
    description: name,
  });
  return services.auth.authenticate({ authorization: `Bearer ${secret}` }, name);
};
const paidCall = async (keyAuth: Awaited<ReturnType<typeof fundedKey>>) => {
  // A server's calls arrive as I/O events: without this turn of the event loop the workers would run on promises
  // alone, and the embedded database's thread (src/db/pglite-thread.ts) would get no answer through until the end.
  await new Promise<void>((resolve) => setImmediate(resolve));
  const reservation = await services.billing.reserve(keyAuth, cost);
  await services.billing.settle(reservation, usage);
  return true;
};
if ('billing reserve → settle, one account'.includes(only)) {
  const keyAuth = await fundedKey('bench');
  await measureBilling('billing reserve → settle, one account (in-process)', () => paidCall(keyAuth));
}
if (`billing reserve → settle, ${connections} accounts`.includes(only)) {
  const keys = await Promise.all(Array.from({ length: connections }, (_, index) => fundedKey(`bench-${index}`)));
  let next = 0;
  await measureBilling(`billing reserve → settle, ${connections} accounts (in-process)`, () =>
    paidCall(keys[next++ % keys.length]!),
  );
}

server.close();
await app.close();

const lines = [
  `Database: ${database.kind}; ${connections} concurrent; ${seconds} s per row; ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}; Node ${process.version}`,
  '',
  '| scenario | requests/s | p50 ms | p90 ms | p99 ms | errors |',
  '|---|---:|---:|---:|---:|---:|',
  ...rows.map(([name, r]) => `| ${name} | ${r.rps} | ${r.p50} | ${r.p90} | ${r.p99} | ${r.errors} |`),
  ...(backlogs.length ? ['', ...backlogs] : []),
];
console.log(lines.join('\n'));
