import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServerAdapter } from '@whatwg-node/server';
import { chromium } from 'playwright-core';
import { CONSOLE_DIR } from '../build.ts';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { createLogger } from '../src/logger.ts';
import { chromiumPath } from '../test/helpers/browser.ts';
import { buildConsole } from '../web/build.ts';
import { seedUsage } from './billing-seed.ts';

/**
 * The console's budgets (issue 36), on the embedded database (PGlite) seeded with BENCH_ENTRIES (1,000,000)
 * usage entries over 30 days, 40 models and 20 keys:
 *   - first load: the compressed (br) JavaScript the html loads, ≤ 250 KB;
 *   - the overview interactive: from navigation to the balance, the spend figures and both charts drawn, with
 *     the analytics cache cleared before each run (cold), ≤ 1 s. Median and best of BENCH_RUNS (5), in chromium.
 * Usage: npm run bench:dashboard  (BENCH_DATA_DIR keeps the seeded database between runs.)
 */
const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const JS_BUDGET_BYTES = 250 * 1024;
const INTERACTIVE_BUDGET_MS = 1000;
const ADMIN = 'bench-dashboard-admin-key';

await buildConsole(CONSOLE_DIR);
const dataDir = process.env.BENCH_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'lagoon-bench-dashboard-'));
const config = loadConfig({
  ...process.env,
  DATABASE_URL: undefined,
  LAGOON_DATA_DIR: dataDir,
  LOG_LEVEL: 'silent',
  LAGOON_BOOTSTRAP_ADMIN_KEY: ADMIN,
  LAGOON_CONTROL_SOCKET: 'false',
  LAGOON_JOB_WORKERS: 'false',
});
const database = await openDatabase({ dataDir: join(dataDir, 'pglite') });
const app = await createApp(config, { database, logger: createLogger('silent') });
const admin = await app.services.auth.authenticate({ authorization: `Bearer ${ADMIN}` }, 'bench');
if (admin.kind !== 'apiKey') throw new Error('bootstrap key did not authenticate');

const seeded = await database.db
  .selectFrom('usage_entries')
  .select((eb) => eb.fn.countAll<string>().as('n'))
  .executeTakeFirstOrThrow();
if (Number(seeded.n) === 0) {
  const keyIds: string[] = [];
  for (let i = 0; i < 20; i += 1)
    keyIds.push(
      (await app.services.apiKeys.create(admin, { apiKeyType: 'INFERENCE', description: `bench key ${i + 1}` })).key.id,
    );
  const started = performance.now();
  const result = await seedUsage(database.db, {
    accountId: admin.accountId,
    keyIds,
    entries: ENTRIES,
    days: 30,
    models: 40,
  });
  console.log(
    `seeded ${result.entries} entries, ${result.rollupRows} rollup rows in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}

const server = createServer(createServerAdapter((request: Request) => app.fetch(request)));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const address = server.address();
const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

// First load: the scripts index.html names, as a browser gets them (Accept-Encoding: br).
const html = await (await fetch(`${base}/dashboard/`)).text();
let jsBytes = 0;
for (const [, src] of html.matchAll(/<script[^>]+src="([^"]+)"/g)) {
  const response = await fetch(`${base}${src}`, { headers: { 'accept-encoding': 'br' } });
  jsBytes += Number(response.headers.get('content-length'));
  await response.arrayBuffer();
}

// The full browser, as people use it (the tests run the lighter headless shell).
const browser = await chromium.launch({
  executablePath: chromiumPath(['chromium', 'chromium-browser']),
  args: ['--no-sandbox', '--disable-gpu'],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
await context.addInitScript((bearer) => {
  sessionStorage.setItem('lagoon.credential', JSON.stringify({ bearer, kind: 'key', label: 'bench' }));
}, ADMIN);
const samples: number[] = [];
/** From navigation to the overview's last GraphQL answer received: the API's share of the interactive time. */
const apiSamples: number[] = [];
for (let run = 0; run < RUNS + 1; run += 1) {
  await app.services.analytics.clearCache();
  const page = await context.newPage();
  let lastAnswer = 0;
  page.on('requestfinished', (request) => {
    if (new URL(request.url()).pathname === '/graphql') lastAnswer = performance.now();
  });
  const started = performance.now();
  await page.goto(`${base}/dashboard/overview`);
  await page.locator('[data-testid="spend-30d"]').waitFor();
  await page.locator('[data-testid="chart-model"] canvas').waitFor();
  await page.locator('[data-testid="chart-key"] canvas').waitFor();
  const ms = performance.now() - started;
  if (run > 0) {
    // the first run warms the server's code paths and chromium's cache
    samples.push(ms);
    apiSamples.push(lastAnswer - started);
  }
  await page.close();
}
await browser.close();
samples.sort((a, b) => a - b);
apiSamples.sort((a, b) => a - b);
const median = samples[Math.floor(samples.length / 2)]!;
const apiMedian = apiSamples[Math.floor(apiSamples.length / 2)]!;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
console.log(
  `machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
console.log(`usage entries: ${ENTRIES.toLocaleString('en-US')} (PGlite)`);
console.log(
  `first-load JS (br): ${kb(jsBytes)} (budget ${kb(JS_BUDGET_BYTES)}) ${jsBytes <= JS_BUDGET_BYTES ? 'OK' : 'OVER'}`,
);
console.log(
  `overview interactive, cold analytics: median ${median.toFixed(0)} ms, best ${samples[0]!.toFixed(0)} ms over ${RUNS} runs (budget ${INTERACTIVE_BUDGET_MS} ms) ${median <= INTERACTIVE_BUDGET_MS ? 'OK' : 'OVER'}`,
);
console.log(
  `  of which until the last GraphQL answer: median ${apiMedian.toFixed(0)} ms; after it (drawing): median ${(median - apiMedian).toFixed(0)} ms`,
);
server.close();
await app.close();
if (!process.env.BENCH_DATA_DIR) rmSync(dataDir, { recursive: true, force: true });
