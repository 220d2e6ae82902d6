import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { JobQueue, QUEUE_ENTRIES } from '../../src/media/jobs/job-queue.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { eventually } from '../helpers/eventually.ts';
import { createAccountWithKey } from '../helpers/services.ts';
import { scaled } from '../helpers/time-scale.ts';
import { jobInternals } from '../../src/media/jobs/job.wiring.ts';

/*
 * Jobs queued before an upgrade whose queue entries are not where this build's queue looks (pg-boss 12 kept them in
 * its `pgboss` schema; this build's pg-boss 10 uses its own): a queue that starts gives each job Lagoon still shows
 * QUEUED or PROCESSING an entry again, so it runs, once, charged once. A job whose attempt was running when the old
 * workers stopped runs as its next attempt. Both databases.
 */
describe(`jobs left without a queue entry (${testDatabaseKind})`, () => {
  let t: TestApp;
  let secret: string;
  let accountId: string;
  let workers: JobQueue | undefined;

  beforeAll(async () => {
    t = await createTestApp({ LAGOON_JOB_WORKERS: 'false' });
    ({ secret, accountId } = await createAccountWithKey(t.app.services, { credit: { USD: '5' }, type: 'INFERENCE' }));
  }, scaled(120_000));
  afterAll(async () => {
    await workers?.stop();
    await t?.close();
  }, scaled(60_000));

  const queue = async (prompt: string) => {
    const job = { model: 'lagoon-sim-video', prompt, duration: '5s', resolution: '480p' };
    const queued = await t.call('/api/v1/video/queue', { body: job, key: secret });
    expect(queued.status).toBe(200);
    return ((await queued.json()) as { queue_id: string }).queue_id;
  };
  const jobRow = (id: string) =>
    t.app.database.db.selectFrom('jobs').select(['status', 'attempts']).where('id', '=', id).executeTakeFirstOrThrow();

  it(
    'should run every QUEUED or PROCESSING job without an entry once a queue starts, charged once',
    async () => {
      const db = t.app.database.db;
      const waiting = await queue('queued before the upgrade');
      const interrupted = await queue('running when the old workers stopped');
      await db.updateTable('jobs').set({ status: 'PROCESSING', attempts: 1 }).where('id', '=', interrupted).execute();
      // Their entries stand in the old schema: none in this queue's table.
      await sql`delete from ${sql.table(QUEUE_ENTRIES.table)}`.execute(db);
      const usd = async () => (await t.app.services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD')!;
      expect(await usd()).toMatchObject({ amount: 5_000_000_000n, reserved: 600_000_000n });

      // A process with workers starts (this app's own queue has no workers): it hands both jobs over and runs them.
      const { runner } = jobInternals(t.app.services.jobs.service);
      workers = new JobQueue({
        db,
        logger: createLogger('silent'),
        handler: (jobId, attempt) => runner.run(jobId, attempt),
        options: {
          concurrency: 1,
          workers: true,
          retryLimit: 2,
          expireSeconds: 600,
          heartbeatSeconds: 30,
          pollingSeconds: 0.5,
        },
      });
      await workers.start();
      await eventually(async () => {
        expect(await jobRow(waiting)).toMatchObject({ status: 'COMPLETED', attempts: 1 });
        expect(await jobRow(interrupted)).toMatchObject({ status: 'COMPLETED', attempts: 2 });
      }, scaled(60_000));
      for (const queue_id of [waiting, interrupted]) {
        const retrieved = await t.call('/api/v1/video/retrieve', {
          body: { model: 'lagoon-sim-video', queue_id },
          key: secret,
        });
        expect(retrieved.headers.get('content-type')).toBe('video/mp4');
        await retrieved.arrayBuffer();
      }
      // 0.05 USD/s × 5 s × 1.2 (audio) = 0.30 USD each, charged once each; no hold left.
      await eventually(async () => expect(await usd()).toMatchObject({ amount: 4_400_000_000n, reserved: 0n }), 15_000);
      const entries = await sql<{ count: string }>`
      select count(*) as count from usage_entries where account_id = ${accountId}
    `.execute(db);
      expect(Number(entries.rows[0]!.count)).toBe(2);

      // Started again (another process, a restart): nothing more to hand over, nothing runs twice.
      await workers.stop();
      await workers.start();
      const states = await sql<{ state: string }>`
      select state::text as state from ${sql.table(QUEUE_ENTRIES.table)} order by state
    `.execute(db);
      expect(states.rows.map((row) => row.state)).toEqual(['completed', 'completed']);
    },
    scaled(120_000),
  );
});

/*
 * pg-boss 10 has no LISTEN/NOTIFY: a send NOTIFYs in its transaction and the workers' listener wakes the idle ones.
 * Workers that poll once a minute still take a job queued over HTTP within seconds. Both databases.
 */
describe(`a queued job wakes an idle worker (${testDatabaseKind})`, () => {
  let t: TestApp;
  let secret: string;
  let workers: JobQueue | undefined;

  beforeAll(async () => {
    t = await createTestApp({ LAGOON_JOB_WORKERS: 'false' });
    ({ secret } = await createAccountWithKey(t.app.services, { credit: { USD: '5' }, type: 'INFERENCE' }));
  }, scaled(120_000));
  afterAll(async () => {
    await workers?.stop();
    await t?.close();
  }, scaled(60_000));

  it(
    'should start a job long before the next poll',
    async () => {
      const taken: string[] = [];
      workers = new JobQueue({
        db: t.app.database.db,
        logger: createLogger('silent'),
        handler: async (jobId) => void taken.push(jobId),
        options: {
          concurrency: 1,
          workers: true,
          retryLimit: 0,
          expireSeconds: 600,
          heartbeatSeconds: 30,
          pollingSeconds: 60,
        },
      });
      await workers.start();
      // Past the workers' first fetch (of nothing) and into their minute-long wait.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const job = { model: 'lagoon-sim-video', prompt: 'wake up', duration: '5s' };
      const queued = await t.call('/api/v1/video/queue', { body: job, key: secret });
      expect(queued.status).toBe(200);
      const { queue_id } = (await queued.json()) as { queue_id: string };
      const sentAt = Date.now();
      await eventually(async () => expect(taken).toContain(queue_id), 50_000);
      // Without the wake-up it would wait for the poll, 58 s from now.
      expect(Date.now() - sentAt).toBeLessThan(30_000);
    },
    scaled(120_000),
  );
});

/*
 * pg-boss 10 has no heartbeats: a running attempt writes `jobs.heartbeat_at`, and a supervisor in every process fails
 * an attempt whose beat is late (its worker died), which the given-up sweep then follows. Here one attempt's worker
 * is alive and beating, the other's is dead (an entry taken a minute ago that nothing beats for). Both databases
 * (on PostgreSQL test/rest/jobs-crash.test.ts and jobs-given-up.test.ts kill real worker processes).
 */
describe(`attempts with and without a heartbeat (${testDatabaseKind})`, () => {
  let t: TestApp;
  let secret: string;
  let workers: JobQueue | undefined;
  const HEARTBEAT = 10; // the smallest accepted

  beforeAll(async () => {
    t = await createTestApp({
      LAGOON_JOB_WORKERS: 'false',
      LAGOON_JOB_RETRIES: '0',
      LAGOON_JOB_HEARTBEAT_SECONDS: String(HEARTBEAT),
    });
    ({ secret } = await createAccountWithKey(t.app.services, { credit: { USD: '5' }, type: 'INFERENCE' }));
  }, scaled(120_000));
  afterAll(async () => {
    await workers?.stop();
    await t?.close();
  }, scaled(60_000));

  const queue = async (prompt: string) => {
    const job = { model: 'lagoon-sim-video', prompt, duration: '5s' };
    const queued = await t.call('/api/v1/video/queue', { body: job, key: secret });
    expect(queued.status).toBe(200);
    return ((await queued.json()) as { queue_id: string }).queue_id;
  };
  const entryOf = async (id: string) =>
    (
      await sql<{ state: string; retry_count: number }>`
        select state::text as state, retry_count from ${sql.table(QUEUE_ENTRIES.table)} where id = ${id}
      `.execute(t.app.database.db)
    ).rows[0];

  it(
    'should fail the attempt nothing beats for, and leave the beating one running',
    async () => {
      const db = t.app.database.db;
      const signals = new Map<string, AbortSignal>();
      let release: () => void = () => undefined;
      const released = new Promise<void>((resolve) => (release = resolve));
      workers = new JobQueue({
        db,
        logger: createLogger('silent'),
        handler: async (jobId, attempt) => {
          signals.set(jobId, attempt.signal);
          await Promise.race([released, new Promise((resolve) => attempt.signal.addEventListener('abort', resolve))]);
        },
        options: {
          concurrency: 1,
          workers: true,
          retryLimit: 0,
          expireSeconds: 600,
          heartbeatSeconds: HEARTBEAT,
          pollingSeconds: 0.5,
        },
      });
      await workers.start();
      const alive = await queue('a worker that keeps beating');
      await eventually(async () => expect(signals.has(alive)).toBe(true), 30_000);
      const aliveSince = Date.now();
      // The only worker slot is busy, so this one waits; then it stands for an attempt whose worker died a minute ago.
      const dead = await queue('a worker that died');
      await sql`
      update ${sql.table(QUEUE_ENTRIES.table)} set state = 'active', started_on = now() - interval '1 minute'
      where id = ${dead}
    `.execute(db);
      await db.updateTable('jobs').set({ status: 'PROCESSING', attempts: 1 }).where('id', '=', dead).execute();

      // Failed within about two heartbeats (its last attempt: the queue gives up), and the job follows.
      await eventually(async () => expect((await entryOf(dead))?.state).toBe('failed'), 60_000);
      await eventually(async () => {
        const row = await db.selectFrom('jobs').select('status').where('id', '=', dead).executeTakeFirstOrThrow();
        expect(row.status).toBe('FAILED');
      }, scaled(60_000));
      // Still running two and a half heartbeats after it started: its beats kept it.
      await eventually(async () => {
        const beat = await db
          .selectFrom('jobs')
          .select('heartbeat_at')
          .where('id', '=', alive)
          .executeTakeFirstOrThrow();
        expect(beat.heartbeat_at).not.toBeNull();
      }, scaled(30_000));
      // The dead one's two heartbeats count towards the live one's two and a half.
      const rest = aliveSince + 2.5 * HEARTBEAT * 1000 - Date.now();
      if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
      expect(await entryOf(alive)).toEqual({ state: 'active', retry_count: 0 });
      expect(signals.get(alive)?.aborted).toBe(false);

      release();
      await eventually(async () => expect((await entryOf(alive))?.state).toBe('completed'), 30_000);
    },
    scaled(180_000),
  );
});
