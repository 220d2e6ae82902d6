import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORKER_ENTRY } from '../../build.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind, type TestDatabase } from '../helpers/db.ts';
import { eventually } from '../helpers/eventually.ts';
import { createAccountWithKey } from '../helpers/services.ts';
import { scaled } from '../helpers/time-scale.ts';

/*
 * `npm run worker` as operators run it: an API server without workers (LAGOON_JOB_WORKERS=false) queues, a
 * separate worker process on the same PostgreSQL runs the job, and the API then serves the media. PostgreSQL only
 * (the embedded database belongs to one process).
 */
describe.skipIf(testDatabaseKind !== 'postgres')('queued jobs run by a separate worker process', () => {
  let t: TestApp;
  let worker: ChildProcess | undefined;
  let secret: string;
  let accountId: string;

  let mediaDir: string;

  beforeAll(async () => {
    // One media directory for both processes, as on one machine (several machines share an S3 bucket instead).
    mediaDir = await mkdtemp(join(tmpdir(), 'lagoon-worker-media-'));
    t = await createTestApp({ LAGOON_JOB_WORKERS: 'false', LAGOON_MEDIA_DIR: mediaDir });
    ({ secret, accountId } = await createAccountWithKey(t.app.services, { credit: { USD: '5' }, type: 'INFERENCE' }));
    const url = (t.app.database as TestDatabase).url!;
    worker = spawn(process.execPath, [WORKER_ENTRY], {
      env: {
        ...process.env,
        DATABASE_URL: url,
        LOG_LEVEL: 'silent',
        LAGOON_JOB_CONCURRENCY: '1',
        LAGOON_MEDIA_DIR: mediaDir,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }, scaled(120_000));
  afterAll(async () => {
    if (worker && worker.exitCode === null) {
      const exited = new Promise((resolve) => worker!.once('exit', resolve));
      worker.kill('SIGTERM');
      await exited;
    }
    await t?.close();
    await rm(mediaDir, { recursive: true, force: true });
  }, scaled(60_000));

  it(
    'should run a job queued by a server without workers, and stop on SIGTERM',
    async () => {
      const job = { model: 'lagoon-sim-video', prompt: 'elsewhere', duration: '5s' };
      const queued = await t.call('/api/v1/video/queue', { body: job, key: secret });
      expect(queued.status).toBe(200);
      const { queue_id } = (await queued.json()) as { queue_id: string };
      await eventually(async () => {
        const response = await t.call('/api/v1/video/retrieve', {
          body: { model: 'lagoon-sim-video', queue_id },
          key: secret,
        });
        expect(response.headers.get('content-type')).toBe('video/mp4');
        // The whole file, stored by the worker where this server reads it.
        expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(1000);
      }, scaled(90_000));
      // Held by the API process, charged by the worker: the quote, once.
      await eventually(async () => {
        const usd = (await t.app.services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD')!;
        expect(usd).toMatchObject({ amount: 4_700_000_000n, reserved: 0n });
      }, 15_000);
    },
    scaled(120_000),
  );
});
