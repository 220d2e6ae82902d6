import { createServer } from 'node:http';
import { cpus, loadavg, totalmem } from 'node:os';
import { createServerAdapter } from '@whatwg-node/server';
import { sql } from 'kysely';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { createLogger } from '../src/logger.ts';
import { seedUsage } from './billing-seed.ts';

/**
 * Billing read side at scale, over HTTP on PostgreSQL: one account with BENCH_ENTRIES (1,000,000) usage entries
 * over 90 days, 40 models and 20 keys with their daily rollups, then
 *   - GET /billing/usage-analytics?lookback=90d, cold (cache cleared before each request) and warm;
 *   - GET /billing/usage?limit=500&page=1000 (JSON);
 *   - a full CSV export (rows/s, and memory while it streams).
 * Requests are sequential on one keep-alive connection (latency, not throughput). Usage:
 *   createdb -h 127.0.0.1 -U postgres lagoon_billing_bench
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/lagoon_billing_bench npm run bench:billing
 * A database that already holds the seeded account is reused (the seed is skipped).
 */
const url = process.env.DATABASE_URL;
if (!url) throw new Error('bench:billing runs on PostgreSQL: set DATABASE_URL to a fresh database');
const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 1_000_000);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 100);
const WARMUP = 5;
const ADMIN = 'bench-billing-admin-key';

const config = loadConfig({
  ...process.env,
  LOG_LEVEL: 'silent',
  LAGOON_BOOTSTRAP_ADMIN_KEY: ADMIN,
  LAGOON_CONTROL_SOCKET: 'false',
});
const database = await openDatabase({ url, poolSize: 20 });
const app = await createApp(config, { database, logger: createLogger('silent') });
const { services } = app;
const db = database.db;
const admin = await services.auth.authenticate({ authorization: `Bearer ${ADMIN}` }, 'bench');
if (admin.kind !== 'apiKey') throw new Error('bootstrap key did not authenticate');

const existing = await db
  .selectFrom('usage_entries')
  .select(sql<string>`count(*)::text`.as('n'))
  .where('account_id', '=', admin.accountId)
  .executeTakeFirstOrThrow();
if (Number(existing.n) === 0) {
  const keyIds: string[] = [];
  for (let i = 0; i < 20; i += 1)
    keyIds.push(
      (await services.apiKeys.create(admin, { apiKeyType: 'INFERENCE', description: `bench key ${i + 1}` })).key.id,
    );
  const started = performance.now();
  const seeded = await seedUsage(db, { accountId: admin.accountId, keyIds, entries: ENTRIES, days: 90, models: 40 });
  await sql`vacuum analyze usage_entries`.execute(db);
  await sql`vacuum analyze usage_daily`.execute(db);
  console.log(
    `seeded ${seeded.entries} entries and ${seeded.rollupRows} rollup rows in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
} else if (Number(existing.n) !== ENTRIES) {
  throw new Error(
    `the database holds ${existing.n} entries for the bench account, not ${ENTRIES}: use a fresh database`,
  );
}
const facts = await sql<{ rollups: string; entries_size: string; rollups_size: string }>`
  select (select count(*) from usage_daily where account_id = ${admin.accountId}::uuid and day > current_date - 90)::text as rollups,
    pg_size_pretty(pg_total_relation_size('usage_entries')) as entries_size, pg_size_pretty(pg_total_relation_size('usage_daily')) as rollups_size`.execute(
  db,
);

const server = createServer(createServerAdapter((request: Request) => app.fetch(request)));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const address = server.address();
const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/api/v1`;
const headers = { authorization: `Bearer ${ADMIN}` };

async function timed(path: string, before?: () => Promise<void>, check?: (body: string) => void) {
  const samples: number[] = [];
  for (let i = 0; i < ITERATIONS + WARMUP; i += 1) {
    await before?.();
    const started = performance.now();
    const response = await fetch(`${base}${path}`, { headers });
    const body = await response.text();
    const ms = performance.now() - started;
    if (!response.ok) throw new Error(`${path}: ${response.status} ${body}`);
    check?.(body);
    if (i >= WARMUP) samples.push(ms); // the first requests warm connections, plans and the JIT
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) => (samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] ?? 0).toFixed(1);
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99), max: (samples.at(-1) ?? 0).toFixed(1) };
}

const rows: [string, Awaited<ReturnType<typeof timed>>][] = [];
const analyticsPath = '/billing/usage-analytics?lookback=90d';
rows.push([
  'usage-analytics?lookback=90d, cold (cache cleared before each)',
  await timed(analyticsPath, () => services.analytics.clearCache()),
]);
rows.push(['usage-analytics?lookback=90d, warm (cached)', await timed(analyticsPath)]);
const pageCheck = (body: string) => {
  const page = JSON.parse(body) as { data: unknown[]; pagination: { total: number } };
  if (page.data.length !== 500 || page.pagination.total !== ENTRIES)
    throw new Error(`unexpected page: ${page.data.length} rows of ${page.pagination.total}`);
};
rows.push([
  'usage?limit=500&page=1000 (JSON, newest first)',
  await timed('/billing/usage?limit=500&page=1000', undefined, pageCheck),
]);
rows.push([
  'usage?limit=500&page=1000&sortOrder=asc',
  await timed('/billing/usage?limit=500&page=1000&sortOrder=asc', undefined, pageCheck),
]);
rows.push(['usage?limit=500&page=1', await timed('/billing/usage?limit=500&page=1', undefined, pageCheck)]);

// Full CSV export: count rows as they stream and sample memory every 50 ms.
global.gc?.();
const rssBefore = process.memoryUsage().rss;
let peakRss = rssBefore;
let peakHeap = process.memoryUsage().heapUsed;
const sampler = setInterval(() => {
  const usage = process.memoryUsage();
  peakRss = Math.max(peakRss, usage.rss);
  peakHeap = Math.max(peakHeap, usage.heapUsed);
}, 50);
const csvStarted = performance.now();
const response = await fetch(`${base}/billing/usage`, { headers: { ...headers, accept: 'text/csv' } });
let lines = 0;
let bytes = 0;
const rssAtQuarter: number[] = [];
const reader = response.body!.getReader();
for (;;) {
  const { done, value } = await reader.read();
  if (done) break;
  bytes += value.byteLength;
  for (let i = 0; i < value.length; i += 1) if (value[i] === 10) lines += 1;
  if (lines >= ((rssAtQuarter.length + 1) * ENTRIES) / 4) rssAtQuarter.push(process.memoryUsage().rss);
}
const csvSeconds = (performance.now() - csvStarted) / 1000;
clearInterval(sampler);
const csvRows = lines - 1;
if (csvRows !== ENTRIES) throw new Error(`CSV had ${csvRows} rows, expected ${ENTRIES}`);

server.close();
await app.close();

const mb = (n: number) => `${Math.round(n / 1_048_576)} MB`;
console.log(
  [
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${mb(totalmem())} RAM, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(
        ' ',
      )}, Node ${process.version}; database ${database.kind}; ${ENTRIES} entries (${facts.rows[0]?.entries_size} with indexes), ${facts.rows[0]?.rollups} rollup rows in the 90-day window (table ${facts.rows[0]?.rollups_size}); ${ITERATIONS} sequential requests per row`,
    '',
    '| request | p50 ms | p95 ms | p99 ms | max ms |',
    '|---|---:|---:|---:|---:|',
    ...rows.map(([name, r]) => `| ${name} | ${r.p50} | ${r.p95} | ${r.p99} | ${r.max} |`),
    '',
    `CSV export: ${csvRows} rows, ${mb(bytes)} in ${csvSeconds.toFixed(1)} s = ${Math.round(csvRows / csvSeconds)} rows/s; RSS ${mb(rssBefore)} before, peak ${mb(peakRss)} during (+${mb(peakRss - rssBefore)}); RSS at 25/50/75/100% of the rows: ${rssAtQuarter.map(mb).join(', ')}; peak heap ${mb(peakHeap)}`,
  ].join('\n'),
);
