import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { sql } from 'kysely';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase, type Database } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { createLogger } from '../src/logger.ts';
import { JobQueue, QUEUE_ENTRIES, type JobHandler, type QueueOptions } from '../src/media/jobs/job-queue.ts';
import { SimulatorJobEngine } from '../src/providers/jobs/simulator-job.engine.ts';
import { createAccountWithKey } from '../test/helpers/services.ts';

/**
 * Job benchmarks (`DATABASE_URL=postgres://… npm run bench:jobs`, a fresh database each run), in this process:
 * - pickup: queue → worker pickup latency (send committed → handler called) with 1,000 jobs already queued: the
 *   backlog sits in the music queue, whose two worker slots are held by jobs that never end, and BENCH_PICKUPS
 *   (default 200) video jobs are sent one by one to idle video workers, 20–100 ms apart. With NOTIFY (the default)
 *   and with polling only (BENCH_NOTIFY=false).
 * - throughput: BENCH_JOBS (default 200) simulator videos of 2 s (480p, 16:9, with audio; real ffmpeg renders)
 *   queued at once and run by 2 workers: wall time and errors.
 * - retrieve: POST /api/v1/video/retrieve of a PROCESSING job through the whole app (in-process fetch, no TCP):
 *   BENCH_RETRIEVES (default 2,000) sequential calls, p50/p99.
 */
const PARTS = (process.env.BENCH_PARTS ?? 'pickup,throughput,retrieve').split(',');
const PICKUPS = Number(process.env.BENCH_PICKUPS ?? 200);
const JOBS = Number(process.env.BENCH_JOBS ?? 200);
const RETRIEVES = Number(process.env.BENCH_RETRIEVES ?? 2_000);
const NOTIFY = process.env.BENCH_NOTIFY !== 'false';
const url = process.env.DATABASE_URL;
const logger = createLogger('warn');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const round = (n: number) => Math.round(n * 100) / 100;
const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

function queue(db: Database, handler: JobHandler, options: Partial<QueueOptions> = {}): JobQueue {
  return new JobQueue({
    db,
    logger,
    handler,
    options: {
      concurrency: 2,
      workers: true,
      retryLimit: 0,
      expireSeconds: 600,
      heartbeatSeconds: 30,
      pollingSeconds: 0.5,
      notify: NOTIFY,
      ...options,
    },
  });
}

async function pickup(db: Database): Promise<void> {
  const backlog = new Set<string>();
  const filler = queue(db, async () => undefined, { workers: false });
  for (let i = 0; i < 1_000; i += 1) {
    const id = randomUUID();
    backlog.add(id);
    await filler.send('audio', id, db);
  }
  await filler.stop();
  const sent = new Map<string, number>();
  const latencies: number[] = [];
  let picked: (() => void) | undefined;
  const workers = queue(db, async (jobId, attempt) => {
    if (backlog.has(jobId)) {
      await new Promise((resolve) => attempt.signal.addEventListener('abort', resolve, { once: true }));
      return;
    }
    const at = sent.get(jobId);
    if (at !== undefined) latencies.push(performance.now() - at);
    picked?.();
  });
  await workers.ready();
  await sleep(2_000);
  const queued = await sql<{
    n: string;
  }>`select count(*) as n from ${sql.table(QUEUE_ENTRIES.table)} where state = 'created'`.execute(db);
  for (let i = 0; i < PICKUPS; i += 1) {
    const id = randomUUID();
    const done = new Promise<void>((resolve) => (picked = resolve));
    sent.set(id, performance.now());
    await workers.send('video', id, db);
    await done;
    await sleep(20 + Math.random() * 80);
  }
  await workers.stop();
  const sorted = [...latencies].sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      part: 'pickup',
      notify: NOTIFY,
      queuedWhileMeasuring: Number(queued.rows[0]!.n),
      jobs: sorted.length,
      p50Ms: round(quantile(sorted, 0.5)),
      p90Ms: round(quantile(sorted, 0.9)),
      p99Ms: round(quantile(sorted, 0.99)),
      load: load(),
    }),
  );
  await sql`delete from ${sql.table(QUEUE_ENTRIES.table)}`.execute(db);
}

async function throughput(db: Database): Promise<void> {
  const engine = new SimulatorJobEngine();
  const ids = new Set<string>();
  let done = 0;
  let errors = 0;
  let finished: () => void = () => undefined;
  const all = new Promise<void>((resolve) => (finished = resolve));
  const workers = queue(db, async (jobId, attempt) => {
    if (!ids.has(jobId)) return;
    try {
      const result = await engine.run(
        'lagoon-sim-video',
        {
          kind: 'video',
          prompt: `bench ${jobId}`,
          durationSeconds: 2,
          width: 854,
          height: 480,
          aspectRatio: '16:9',
          resolution: '480p',
          audio: true,
          inputs: [],
        },
        { signal: attempt.signal, progress: () => undefined },
      );
      if (result.kind !== 'media' || result.bytes.length === 0) errors += 1;
    } catch (error) {
      errors += 1;
      console.error(error);
    }
    done += 1;
    if (done === JOBS) finished();
  });
  await workers.ready();
  const started = performance.now();
  for (let i = 0; i < JOBS; i += 1) {
    const id = randomUUID();
    ids.add(id);
    await workers.send('video', id, db);
  }
  await all;
  const seconds = (performance.now() - started) / 1000;
  await workers.stop();
  console.log(
    JSON.stringify({
      part: 'throughput',
      jobs: JOBS,
      workers: 2,
      seconds: round(seconds),
      jobsPerSecond: round(JOBS / seconds),
      errors,
      load: load(),
    }),
  );
}

async function retrieve(database: Awaited<ReturnType<typeof openDatabase>>): Promise<void> {
  const config = loadConfig({
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    DATABASE_URL: url,
    LAGOON_JOB_WORKERS: 'false',
  });
  const app = await createApp(config, { database, logger });
  const { secret } = await createAccountWithKey(app.services, { credit: { USD: '100' }, type: 'INFERENCE' });
  const call = (path: string, body: unknown) =>
    app.fetch(
      new Request(`http://lagoon.bench/api/v1${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
    );
  const queued = await call('/video/queue', { model: 'lagoon-sim-video', prompt: 'bench', duration: '5s' });
  const { queue_id } = (await queued.json()) as { queue_id: string };
  await database.db
    .updateTable('jobs')
    .set({ status: 'PROCESSING', started_at: new Date(), attempts: 1 })
    .where('id', '=', queue_id)
    .execute();
  const body = { model: 'lagoon-sim-video', queue_id };
  for (let i = 0; i < 200; i += 1) await (await call('/video/retrieve', body)).text(); // warm-up
  const latencies: number[] = [];
  let errors = 0;
  for (let i = 0; i < RETRIEVES; i += 1) {
    const started = performance.now();
    const response = await call('/video/retrieve', body);
    const answer = (await response.json()) as { status?: string };
    latencies.push(performance.now() - started);
    if (response.status !== 200 || answer.status !== 'PROCESSING') errors += 1;
  }
  await app.close();
  const sorted = latencies.sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      part: 'retrieve',
      calls: RETRIEVES,
      p50Ms: round(quantile(sorted, 0.5)),
      p99Ms: round(quantile(sorted, 0.99)),
      errors,
      load: load(),
    }),
  );
}

async function main(): Promise<void> {
  if (!url) throw new Error('bench:jobs measures PostgreSQL: set DATABASE_URL to a fresh database');
  const database = await openDatabase({ url, poolSize: 8 });
  await migrateToLatest(database.db);
  console.log(JSON.stringify({ node: process.version, load: load(), notify: NOTIFY }));
  if (PARTS.includes('pickup')) await pickup(database.db);
  if (PARTS.includes('throughput')) await throughput(database.db);
  // The app closes the database it was given.
  if (PARTS.includes('retrieve')) await retrieve(database);
  else await database.close();
}

await main();
