import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUE_ENTRIES } from '../../src/media/jobs/job-queue.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind, type TestDatabase } from '../helpers/db.ts';
import { eventually } from '../helpers/eventually.ts';
import { createAccountWithKey } from '../helpers/services.ts';
import { exited, workerProcesses } from '../helpers/worker-processes.ts';
import { scaled } from '../helpers/time-scale.ts';
import { jobInternals } from '../../src/media/jobs/job.wiring.ts';

/*
 * Crash safety of queued jobs with real processes: an API server without workers queues, a `npm run worker`
 * process (src/worker.ts) takes the job and is killed with SIGKILL in the middle of it; a second worker started
 * afterwards finishes it. The job completes once, on its second attempt, with one usage entry and the quote
 * charged once. PostgreSQL only: the embedded PGlite database belongs to a single process, so no worker process
 * can share it (set TEST_DATABASE_URL to run this file).
 */

const HEARTBEAT = '10'; // the smallest accepted: a dead worker's job is handed out again within ~20 s

if (testDatabaseKind !== 'postgres')
  console.warn(
    'jobs-crash.test.ts: the kill -9 test is skipped, worker processes need PostgreSQL (set TEST_DATABASE_URL)',
  );

describe.skipIf(testDatabaseKind !== 'postgres')('a worker process killed during a job', () => {
  let t: TestApp;
  let secret: string;
  let accountId: string;
  const workers = workerProcesses();
  const startWorker = () =>
    workers.start({
      DATABASE_URL: (t.app.database as TestDatabase).url!,
      LAGOON_JOB_HEARTBEAT_SECONDS: HEARTBEAT,
    });

  const jobRow = (id: string) =>
    t.app.database.db
      .selectFrom('jobs')
      .select(['status', 'attempts', 'reservation_id'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();

  beforeAll(async () => {
    t = await createTestApp({ LAGOON_JOB_WORKERS: 'false', LAGOON_JOB_HEARTBEAT_SECONDS: HEARTBEAT });
    ({ secret, accountId } = await createAccountWithKey(t.app.services, { credit: { USD: '5' }, type: 'INFERENCE' }));
  }, scaled(120_000));
  afterAll(async () => {
    await workers.stopAll();
    await t?.close();
  }, scaled(60_000));

  it(
    'should finish the job once on a new worker, charged once, its hold settled',
    async () => {
      // The longest, largest clip of the simulator: rendering it takes long enough to be caught in the middle.
      const job = { model: 'lagoon-sim-video', prompt: 'crash', duration: '10s', resolution: '720p' };
      const queued = await t.call('/api/v1/video/queue', { body: job, key: secret });
      expect(queued.status).toBe(200);
      const { queue_id } = (await queued.json()) as { queue_id: string };
      const held = await jobRow(queue_id);
      const heldUntil = async () =>
        (
          await t.app.database.db
            .selectFrom('reservations')
            .select(['expires_at', 'status'])
            .where('id', '=', held.reservation_id!)
            .executeTakeFirstOrThrow()
        ).expires_at.getTime();
      const queuedHoldEnd = await heldUntil();

      const first = startWorker();
      // Taken: PROCESSING, and its hold's expiry moved forward by the worker before the engine started.
      await eventually(async () => {
        expect((await jobRow(queue_id)).status).toBe('PROCESSING');
        expect(await heldUntil()).toBeGreaterThan(queuedHoldEnd);
      }, scaled(90_000));
      first.kill('SIGKILL');
      await exited(first);
      // Killed mid-job: the attempt it took is still PROCESSING, nothing is charged, the sweeper leaves the hold.
      expect(await jobRow(queue_id)).toMatchObject({ status: 'PROCESSING', attempts: 1 });
      expect(await t.app.services.billing.sweepExpired()).toBe(0);
      const usd = async () => (await t.app.services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD')!;
      expect(await usd()).toMatchObject({ amount: 5_000_000_000n, reserved: 900_000_000n });

      startWorker();
      await eventually(async () => expect((await jobRow(queue_id)).status).toBe('COMPLETED'), 150_000);
      expect((await jobRow(queue_id)).attempts).toBe(2);
      const response = await t.call('/api/v1/video/retrieve', {
        body: { model: 'lagoon-sim-video', queue_id },
        key: secret,
      });
      expect(response.headers.get('content-type')).toBe('video/mp4');
      // 0.05 USD/s × 10 s × 1.5 (720p) × 1.2 (audio) = 0.90 USD, once; the hold settled.
      await eventually(async () => expect(await usd()).toMatchObject({ amount: 4_100_000_000n, reserved: 0n }), 15_000);
      const entries = await sql<{ count: string }>`
      select count(*) as count from usage_entries where account_id = ${accountId} and notes like ${`%${queue_id}%`}
    `.execute(t.app.database.db);
      expect(Number(entries.rows[0]!.count)).toBe(1);
      const reservation = await t.app.database.db
        .selectFrom('reservations')
        .select('status')
        .where('id', '=', held.reservation_id!)
        .executeTakeFirstOrThrow();
      expect(reservation.status).not.toBe('held');
    },
    scaled(240_000),
  );
});

/*
 * The job row and its queue entry are written in one transaction: a failure right after pg-boss took the entry
 * (standing for a crash between the two writes) leaves neither, and the hold goes back. Both databases.
 */
describe(`queueing a job is all or nothing (${testDatabaseKind})`, () => {
  let t: TestApp;
  let secret: string;
  let accountId: string;

  beforeAll(async () => {
    t = await createTestApp({ LAGOON_JOB_WORKERS: 'false' });
    ({ secret, accountId } = await createAccountWithKey(t.app.services, { credit: { USD: '5' }, type: 'INFERENCE' }));
  }, scaled(120_000));
  afterAll(async () => t?.close(), scaled(60_000));

  const count = async (table: string) =>
    Number(
      (await sql<{ n: string }>`select count(*) as n from ${sql.table(table)}`.execute(t.app.database.db)).rows[0]!.n,
    );

  it(
    'should leave no job row and no queue entry when the transaction fails after the send',
    async () => {
      const queue = jobInternals(t.app.services.jobs.service).queue;
      const send = queue.send.bind(queue);
      const job = { model: 'lagoon-sim-video', prompt: 'atomic', duration: '5s' };
      // One job queued normally: the queue's schema exists, and both tables hold its entry.
      expect((await t.call('/api/v1/video/queue', { body: job, key: secret })).status).toBe(200);
      const [jobsBefore, entriesBefore] = [await count('jobs'), await count(QUEUE_ENTRIES.table)];
      expect(entriesBefore).toBe(1);
      queue.send = async (...args) => {
        await send(...args);
        throw new Error('the process died here');
      };
      try {
        const refused = await t.call('/api/v1/video/queue', { body: job, key: secret });
        expect(refused.status).toBeGreaterThanOrEqual(500);
      } finally {
        queue.send = send;
      }
      expect(await count('jobs')).toBe(jobsBefore);
      expect(await count(QUEUE_ENTRIES.table)).toBe(entriesBefore);
      const usd = (await t.app.services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD')!;
      expect(usd.reserved).toBe(300_000_000n); // the first job's hold only
    },
    scaled(120_000),
  );
});
