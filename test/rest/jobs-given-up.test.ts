import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUE_ENTRIES } from '../../src/media/jobs/job-queue.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind, type TestDatabase } from '../helpers/db.ts';
import { eventually } from '../helpers/eventually.ts';
import { GATED_MODEL, gatedQueueApi } from '../helpers/gated-queue-api.ts';
import { createAccountWithKey } from '../helpers/services.ts';
import { exited, workerProcesses } from '../helpers/worker-processes.ts';
import { scaled } from '../helpers/time-scale.ts';
import { jobInternals } from '../../src/media/jobs/job.wiring.ts';

/*
 * A job whose worker dies on every attempt: each `npm run worker` process that takes it is killed with SIGKILL, so
 * the queue hands it out again after a missed heartbeat and, after the last attempt, gives up on it (state `failed`).
 * Lagoon must follow within a minute: the job FAILED, its hold released, the balance exactly what it was, nothing
 * charged. The engine is a queue API that never finishes, so an attempt runs until its worker is killed. PostgreSQL
 * only: the embedded database belongs to one process.
 */

const HEARTBEAT = '10'; // the smallest accepted: a dead worker's attempt is given up on within ~20 s

if (testDatabaseKind !== 'postgres')
  console.warn('jobs-given-up.test.ts: skipped, worker processes need PostgreSQL (set TEST_DATABASE_URL)');

describe.skipIf(testDatabaseKind !== 'postgres')('a job whose worker is killed on every attempt', () => {
  const upstream = gatedQueueApi();
  let closeUpstream: () => Promise<void> = async () => undefined;
  let t: TestApp;
  let dir: string;
  let configPath: string;
  let secret: string;
  let accountId: string;
  const workers = workerProcesses();
  const startWorker = () =>
    workers.start({
      DATABASE_URL: (t.app.database as TestDatabase).url!,
      LAGOON_CONFIG: configPath,
      LAGOON_MEDIA_DIR: join(dir, 'media'),
      LAGOON_JOB_RETRIES: '1',
      LAGOON_JOB_HEARTBEAT_SECONDS: HEARTBEAT,
    });
  const jobRow = (id: string) =>
    t.app.database.db
      .selectFrom('jobs')
      .select(['status', 'attempts', 'reservation_id', 'finished_at'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
  const usd = async () => (await t.app.services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD')!;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lagoon-given-up-'));
    configPath = join(dir, 'lagoon.json');
    closeUpstream = (await upstream.start(configPath)).close;
    upstream.state.phase = 'running'; // and never done
    t = await createTestApp({
      LAGOON_JOB_WORKERS: 'false',
      LAGOON_CONFIG: configPath,
      LAGOON_MEDIA_DIR: join(dir, 'media'),
      LAGOON_JOB_RETRIES: '1',
      LAGOON_JOB_HEARTBEAT_SECONDS: HEARTBEAT,
    });
    ({ secret, accountId } = await createAccountWithKey(t.app.services, { credit: { USD: '5' }, type: 'INFERENCE' }));
  }, scaled(120_000));
  afterAll(async () => {
    await workers.stopAll();
    await t?.close();
    await closeUpstream();
    await rm(dir, { recursive: true, force: true });
  }, scaled(60_000));

  it(
    'should fail the job and release its hold within a minute of the queue giving up',
    async () => {
      const job = { model: GATED_MODEL, prompt: 'a poison job', duration: '10s', resolution: '720p' };
      const queued = await t.call('/api/v1/video/queue', { body: job, key: secret });
      expect(queued.status).toBe(200);
      const { queue_id } = (await queued.json()) as { queue_id: string };
      // 0.05 USD/s × 10 s × 1.5 (720p) × 1.2 (audio) = 0.90 USD held.
      expect(await usd()).toMatchObject({ amount: 5_000_000_000n, reserved: 900_000_000n });

      // Both attempts (LAGOON_JOB_RETRIES=1): each worker takes the job, and is killed while the engine runs it.
      for (const attempt of [1, 2]) {
        const worker = startWorker();
        await eventually(async () => {
          expect(await jobRow(queue_id)).toMatchObject({ status: 'PROCESSING', attempts: attempt });
          expect(upstream.state.submits).toBe(attempt);
        }, scaled(120_000));
        worker.kill('SIGKILL');
        await exited(worker);
      }

      // The queue gives up once the last attempt's heartbeat is missed; Lagoon follows.
      const gaveUpAt = async () =>
        (
          await sql<{ state: string; completed_on: Date | null }>`
          select state::text as state, completed_on from ${sql.table(QUEUE_ENTRIES.table)} where id = ${queue_id}
        `.execute(t.app.database.db)
        ).rows[0];
      await eventually(async () => expect((await gaveUpAt())?.state).toBe('failed'), 120_000);
      await eventually(async () => expect((await jobRow(queue_id)).status).toBe('FAILED'), 90_000);
      const failed = await jobRow(queue_id);
      const queueFailedAt = (await gaveUpAt())!.completed_on!;
      expect(failed.finished_at!.getTime() - queueFailedAt.getTime()).toBeLessThan(60_000);

      // The hold went back whole (by the same sweep, just after the status); nothing charged, no usage entry written.
      await eventually(async () => expect(await usd()).toMatchObject({ amount: 5_000_000_000n, reserved: 0n }), 15_000);
      const reservation = await t.app.database.db
        .selectFrom('reservations')
        .select('status')
        .where('id', '=', failed.reservation_id!)
        .executeTakeFirstOrThrow();
      expect(reservation.status).toBe('released');
      const entries = await sql<{ count: string }>`
      select count(*) as count from usage_entries where account_id = ${accountId}
    `.execute(t.app.database.db);
      expect(Number(entries.rows[0]!.count)).toBe(0);
      const retrieved = await t.call('/api/v1/video/retrieve', { body: { model: GATED_MODEL, queue_id }, key: secret });
      expect(await retrieved.json()).toMatchObject({ status: 'FAILED' });

      // Later sweeps (every process runs one) leave it as it is: released once, never again.
      expect(await jobInternals(t.app.services.jobs.service).runner.sweepGivenUp()).toBe(0);
      expect(await usd()).toMatchObject({ amount: 5_000_000_000n, reserved: 0n });
    },
    scaled(300_000),
  );
});

/*
 * The same sweep on both databases, in one process: a job whose queue entry was cancelled is FAILED and its hold
 * released once; a job Lagoon completed is never failed, whatever the queue's entry says.
 */
describe(`the given-up job sweep (${testDatabaseKind})`, () => {
  let t: TestApp;
  let secret: string;
  let accountId: string;

  beforeAll(async () => {
    // A heartbeat of an hour: the sweep runs only when the test calls it.
    t = await createTestApp({ LAGOON_JOB_WORKERS: 'false', LAGOON_JOB_HEARTBEAT_SECONDS: '3600' });
    ({ secret, accountId } = await createAccountWithKey(t.app.services, { credit: { USD: '5' }, type: 'INFERENCE' }));
  }, scaled(120_000));
  afterAll(async () => t?.close(), scaled(60_000));

  const usd = async () => (await t.app.services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD')!;
  const queue = async () => {
    const job = { model: 'lagoon-sim-video', prompt: 'never run', duration: '5s', resolution: '480p' };
    const queued = await t.call('/api/v1/video/queue', { body: job, key: secret });
    expect(queued.status).toBe(200);
    return ((await queued.json()) as { queue_id: string }).queue_id;
  };

  it(
    'should fail a job whose queue entry was cancelled, release its hold once, and leave a completed job',
    async () => {
      const { runner, queue: jobQueue } = jobInternals(t.app.services.jobs.service);
      expect(await runner.sweepGivenUp()).toBe(0); // nothing to do, and no error before any entry exists
      const cancelled = await queue();
      const completed = await queue();
      expect(await usd()).toMatchObject({ amount: 5_000_000_000n, reserved: 600_000_000n });
      const boss = await jobQueue.start();
      await boss.cancel(QUEUE_ENTRIES.names.video, [cancelled, completed]);
      // Stands for an attempt that completed just before its entry ended: the sweep must not fail it.
      await t.app.database.db.updateTable('jobs').set({ status: 'COMPLETED' }).where('id', '=', completed).execute();

      expect(await runner.sweepGivenUp()).toBe(1);
      const rows = await t.app.database.db
        .selectFrom('jobs')
        .select(['id', 'status', 'error'])
        .where('id', 'in', [cancelled, completed])
        .execute();
      expect(rows.find((row) => row.id === cancelled)).toMatchObject({ status: 'FAILED' });
      expect(rows.find((row) => row.id === completed)).toMatchObject({ status: 'COMPLETED' });
      expect(await usd()).toMatchObject({ amount: 5_000_000_000n, reserved: 300_000_000n });
      const retrieved = await t.call('/api/v1/video/retrieve', {
        body: { model: 'lagoon-sim-video', queue_id: cancelled },
        key: secret,
      });
      expect(await retrieved.json()).toEqual({
        status: 'FAILED',
        error: 'The job queue gave up on this job',
        average_execution_time: expect.any(Number),
        execution_duration: expect.any(Number),
      });

      expect(await runner.sweepGivenUp()).toBe(0);
      expect(await usd()).toMatchObject({ amount: 5_000_000_000n, reserved: 300_000_000n });
    },
    scaled(120_000),
  );
});
