import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { eventually } from '../helpers/eventually.ts';
import { createAccountWithKey } from '../helpers/services.ts';
import { scaled } from '../helpers/time-scale.ts';

/*
 * The JSON shapes of the queue and retrieve answers, as the original's clients read them: the video handle is
 * `{model, queue_id, download_url?}` (no status; the audio handle keeps `status: "QUEUED"`), a waiting job retrieves
 * as PROCESSING (the public enum has no QUEUED), and every JSON retrieve answer carries `average_execution_time`
 * and `execution_duration`, the COMPLETED one of a download-URL video included.
 */

const TIMING = { average_execution_time: expect.any(Number), execution_duration: expect.any(Number) };

describe(`queue and retrieve answers of a waiting job (${testDatabaseKind})`, () => {
  let t: TestApp;
  let secret: string;
  const post = (path: string, body: unknown) => t.call(`/api/v1${path}`, { body, key: secret });

  beforeAll(async () => {
    // No workers: a queued job stays waiting.
    t = await createTestApp({ LAGOON_JOB_WORKERS: 'false' });
    ({ secret } = await createAccountWithKey(t.app.services, { credit: { USD: '5' }, type: 'INFERENCE' }));
  }, scaled(120_000));
  afterAll(async () => t?.close(), scaled(60_000));

  it(
    'should answer a video handle without status and retrieve a waiting job as PROCESSING',
    async () => {
      const model = 'lagoon-sim-video';
      const queued = await post('/video/queue', { model, prompt: 'waiting', duration: '5s', resolution: '480p' });
      expect(queued.status).toBe(200);
      const handle = (await queued.json()) as { queue_id: string };
      expect(handle).toStrictEqual({ model, queue_id: expect.any(String) });

      const retrieved = await post('/video/retrieve', { model, queue_id: handle.queue_id });
      expect(retrieved.status).toBe(200);
      expect(retrieved.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await retrieved.json()).toStrictEqual({ status: 'PROCESSING', ...TIMING });
    },
    scaled(60_000),
  );

  it(
    'should keep the audio handle’s QUEUED status and retrieve a waiting audio job as PROCESSING',
    async () => {
      const model = 'lagoon-sim-music';
      const queued = await post('/audio/queue', { model, prompt: 'a calm tune', duration_seconds: 5 });
      expect(queued.status).toBe(200);
      const handle = (await queued.json()) as { queue_id: string };
      expect(handle).toStrictEqual({ model, queue_id: expect.any(String), status: 'QUEUED' });

      const retrieved = await post('/audio/retrieve', { model, queue_id: handle.queue_id });
      expect(retrieved.status).toBe(200);
      expect(await retrieved.json()).toStrictEqual({ status: 'PROCESSING', ...TIMING });
    },
    scaled(60_000),
  );
});

/** A video model that delivers by URL (catalog record `constraints.download_url: true`). */
const OPERATOR_FILE = {
  models: [
    {
      id: 'lagoon-sim-video-download',
      type: 'video',
      name: 'Simulator video by download URL',
      description: 'Test model: the result is fetched from its download_url.',
      constraints: {
        aspect_ratios: ['16:9'],
        resolutions: ['480p'],
        durations: ['5s'],
        model_type: 'text-to-video',
        download_url: true,
      },
      pricing: { per_second: { usd: 0.01, diem: 0.01 } },
      provider: 'simulator',
    },
  ],
};

describe(`retrieve answer of a finished download-URL video (${testDatabaseKind})`, () => {
  let t: TestApp;
  let dir: string;
  let secret: string;
  const post = (path: string, body: unknown) => t.call(`/api/v1${path}`, { body, key: secret });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lagoon-job-shapes-'));
    const config = join(dir, 'operator.json');
    await writeFile(config, JSON.stringify(OPERATOR_FILE));
    t = await createTestApp({
      LAGOON_JOB_WORKERS: 'true',
      LAGOON_CONFIG: config,
      LAGOON_MEDIA_DIR: join(dir, 'media'),
    });
    ({ secret } = await createAccountWithKey(t.app.services, { credit: { USD: '5' }, type: 'INFERENCE' }));
  }, scaled(120_000));
  afterAll(async () => {
    await t?.close();
    await rm(dir, { recursive: true, force: true });
  }, scaled(60_000));

  it(
    'should answer COMPLETED with the URL and both timing fields',
    async () => {
      const model = 'lagoon-sim-video-download';
      const queued = await post('/video/queue', { model, prompt: 'by url', duration: '5s' });
      expect(queued.status).toBe(200);
      const handle = (await queued.json()) as { queue_id: string; download_url: string };
      expect(handle).toStrictEqual({ model, queue_id: expect.any(String), download_url: expect.any(String) });

      let answer: Record<string, unknown> = {};
      await eventually(async () => {
        const retrieved = await post('/video/retrieve', { model, queue_id: handle.queue_id });
        expect(retrieved.headers.get('content-type')).toMatch(/^application\/json/);
        answer = (await retrieved.json()) as typeof answer;
        expect(answer.status).toBe('COMPLETED');
      }, scaled(60_000));
      expect(answer).toStrictEqual({
        status: 'COMPLETED',
        download_url: handle.download_url,
        video_url: handle.download_url,
        ...TIMING,
      });
      // The duration is the run's (the average may still be the one cached while the job was running).
      expect(answer.execution_duration).toBeGreaterThan(0);
    },
    scaled(90_000),
  );
});
