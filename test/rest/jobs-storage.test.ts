import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine, JobResult } from '../../src/providers/jobs/job-engine.ts';
import { BASE, createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { eventually } from '../helpers/eventually.ts';
import { listenLocally } from '../helpers/local-server.ts';
import { startLocalS3, type LocalS3 } from '../helpers/s3-server.ts';
import { createAccountWithKey } from '../helpers/services.ts';
import { scaled } from '../helpers/time-scale.ts';
import { jobInternals } from '../../src/media/jobs/job.wiring.ts';

/*
 * Where a job's media goes and how it comes back, on each store (a local directory; S3 through the AWS SDK against
 * a local s3rver; S3 with pre-signed URLs): retrieve with HTTP Range (206, 416), delete_media_on_completion after
 * the last byte, complete → 404 and the bytes gone from the store, a download-URL model's queue → retrieve →
 * download (with Range) → DELETE revokes it, the GraphQL media URL, and the retention sweep.
 */

const SIZE = 300_000;
/** The media the fake engine makes: known bytes, so every range can be checked exactly. */
const MEDIA = Buffer.from(Array.from({ length: SIZE }, (_, i) => (i * 31 + 7) % 256));
const HOUR = 3_600_000;

const fakeEngine: JobEngine = {
  id: 'simulator',
  simulated: true,
  run: (): Promise<JobResult> => Promise.resolve({ kind: 'media', bytes: MEDIA, contentType: 'video/mp4' }),
};

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

type Store = 'local' | 's3' | 's3-presigned';

describe.each(['local', 's3', 's3-presigned'] as const)(
  `job media storage: %s (${testDatabaseKind})`,
  (store: Store) => {
    let t: TestApp;
    let s3: LocalS3 | undefined;
    let dir: string;
    let mediaDir: string;
    let secret: string;
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      t.call(`/api/v1${path}`, { body, key: secret, headers });
    /** A URL handed out: Lagoon's own go through the app, pre-signed ones to s3rver. */
    const get = (url: string, init: RequestInit = {}) =>
      url.startsWith(BASE) ? t.app.fetch(new Request(url, init)) : fetch(url, init);

    async function completedJob(model = 'lagoon-sim-video'): Promise<string> {
      const queued = await post('/video/queue', { model, prompt: 'stored', duration: '5s' });
      expect(queued.status).toBe(200);
      const { queue_id } = (await queued.json()) as { queue_id: string };
      await eventually(async () => {
        const job = await t.app.services.jobs.service.get(
          await t.app.services.auth.authenticate({ authorization: `Bearer ${secret}` }, 'poll'),
          queue_id,
        );
        expect(job?.status).toBe('COMPLETED');
      }, scaled(60_000));
      return queue_id;
    }

    const mediaIdOf = async (queueId: string) =>
      (
        await t.app.database.db
          .selectFrom('jobs')
          .select('media_object_id')
          .where('id', '=', queueId)
          .executeTakeFirstOrThrow()
      ).media_object_id!;

    /** Whether the store still holds the bytes of a media id. */
    const stored = async (mediaId: string) =>
      store === 'local'
        ? (await readdir(mediaDir)).includes(mediaId)
        : (await fetch(`${s3!.endpoint}/lagoon-media-test/media/${mediaId}`, { method: 'HEAD' })).status === 200;

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'lagoon-job-storage-'));
      mediaDir = join(dir, 'media');
      const config = join(dir, 'operator.json');
      await writeFile(config, JSON.stringify(OPERATOR_FILE));
      if (store !== 'local') s3 = await startLocalS3();
      t = await createTestApp({
        LAGOON_JOB_WORKERS: 'true',
        LAGOON_CONFIG: config,
        LAGOON_MEDIA_DIR: mediaDir,
        ...s3?.env,
        ...(store === 's3-presigned' && { LAGOON_MEDIA_S3_PRESIGNED_URLS: 'true' }),
      });
      jobInternals(t.app.services.jobs.service).runner.engines.set('simulator', fakeEngine);
      ({ secret } = await createAccountWithKey(t.app.services, { credit: { USD: '10' }, type: 'INFERENCE' }));
    }, scaled(120_000));

    afterAll(async () => {
      await t?.close();
      await s3?.close();
      await rm(dir, { recursive: true, force: true });
    });

    it(
      'should answer retrieve with the bytes, whole or by HTTP Range (206, 416)',
      async () => {
        const queue_id = await completedJob();
        expect(await stored(await mediaIdOf(queue_id))).toBe(true);
        const body = { model: 'lagoon-sim-video', queue_id };

        const whole = await post('/video/retrieve', body);
        expect(whole.status).toBe(200);
        expect(whole.headers.get('content-type')).toBe('video/mp4');
        expect(whole.headers.get('accept-ranges')).toBe('bytes');
        expect(Buffer.from(await whole.arrayBuffer()).equals(MEDIA)).toBe(true);

        const part = await post('/video/retrieve', body, { range: 'bytes=1000-1999' });
        expect(part.status).toBe(206);
        expect(part.headers.get('content-range')).toBe(`bytes 1000-1999/${SIZE}`);
        expect(Buffer.from(await part.arrayBuffer()).equals(MEDIA.subarray(1000, 2000))).toBe(true);

        const tail = await post('/video/retrieve', body, { range: 'bytes=-500' });
        expect(tail.status).toBe(206);
        expect(Buffer.from(await tail.arrayBuffer()).equals(MEDIA.subarray(SIZE - 500))).toBe(true);

        const past = await post('/video/retrieve', body, { range: `bytes=${SIZE}-` });
        expect(past.status).toBe(416);
        expect(past.headers.get('content-range')).toBe(`bytes */${SIZE}`);
        expect(((await past.json()) as { code: string }).code).toBe('RANGE_NOT_SATISFIABLE');
      },
      scaled(90_000),
    );

    it(
      'should delete on completion only once the last byte was sent',
      async () => {
        const queue_id = await completedJob();
        const mediaId = await mediaIdOf(queue_id);
        const body = { model: 'lagoon-sim-video', queue_id, delete_media_on_completion: true };
        // A first part: the download is not over, the media stays.
        const first = await post('/video/retrieve', body, { range: `bytes=0-${SIZE / 2 - 1}` });
        expect(first.status).toBe(206);
        await first.arrayBuffer();
        expect(await stored(mediaId)).toBe(true);
        // The rest: the last byte is sent, then the media is deleted.
        const rest = await post('/video/retrieve', body, { range: `bytes=${SIZE / 2}-` });
        expect(rest.status).toBe(206);
        expect(Buffer.from(await rest.arrayBuffer()).equals(MEDIA.subarray(SIZE / 2))).toBe(true);
        const gone = await post('/video/retrieve', { model: 'lagoon-sim-video', queue_id });
        expect(gone.status).toBe(404);
        expect(((await gone.json()) as { code: string }).code).toBe('MEDIA_NOT_FOUND');
        expect(await stored(mediaId)).toBe(false);
      },
      scaled(90_000),
    );

    it(
      'should delete the media on complete: retrieve is 404 and the store no longer holds it',
      async () => {
        const queue_id = await completedJob();
        const mediaId = await mediaIdOf(queue_id);
        const completed = await post('/video/complete', { model: 'lagoon-sim-video', queue_id });
        expect(await completed.json()).toEqual({ success: true });
        const gone = await post('/video/retrieve', { model: 'lagoon-sim-video', queue_id });
        expect(gone.status).toBe(404);
        expect(((await gone.json()) as { code: string }).code).toBe('MEDIA_NOT_FOUND');
        expect(await stored(mediaId)).toBe(false);
      },
      scaled(90_000),
    );

    it(
      'should give a download-URL model a URL at queue time that serves the media once done, with Range',
      async () => {
        const model = 'lagoon-sim-video-download';
        const queued = await post('/video/queue', { model, prompt: 'by url', duration: '5s' });
        expect(queued.status).toBe(200);
        const answer = (await queued.json()) as { queue_id: string; download_url: string };
        expect(answer).toEqual({ model, queue_id: expect.any(String), download_url: expect.any(String) });
        if (store === 's3-presigned') expect(answer.download_url).toContain(s3!.endpoint);
        else expect(answer.download_url).toMatch(new RegExp(`^${BASE}/media/`));

        let retrieved: { status: string; download_url?: string; video_url?: string } = { status: 'PROCESSING' };
        await eventually(async () => {
          const response = await post('/video/retrieve', { model, queue_id: answer.queue_id });
          expect(response.headers.get('content-type')).toMatch(/^application\/json/);
          retrieved = (await response.json()) as typeof retrieved;
          expect(retrieved.status).toBe('COMPLETED');
        }, scaled(60_000));
        // The same URL while it is valid (a pre-signed one is signed anew, for the same object).
        const withoutQuery = (url: string | undefined) => url?.split('?')[0];
        if (store === 's3-presigned')
          expect(withoutQuery(retrieved.download_url)).toBe(withoutQuery(answer.download_url));
        else expect(retrieved.download_url).toBe(answer.download_url);
        // Also as video_url, which veniceai-cli's `video status` and `video retrieve` read.
        expect(retrieved.video_url).toBe(retrieved.download_url);

        const whole = await get(answer.download_url);
        expect(whole.status).toBe(200);
        expect(whole.headers.get('content-type')).toBe('video/mp4');
        expect(Buffer.from(await whole.arrayBuffer()).equals(MEDIA)).toBe(true);
        const part = await get(answer.download_url, { headers: { range: 'bytes=100-199' } });
        expect(part.status).toBe(206);
        expect(Buffer.from(await part.arrayBuffer()).equals(MEDIA.subarray(100, 200))).toBe(true);
      },
      scaled(90_000),
    );

    it(
      'should revoke a Lagoon download URL on DELETE: the media is gone everywhere',
      async () => {
        const model = 'lagoon-sim-video-download';
        const queued = await post('/video/queue', { model, prompt: 'revoke me', duration: '5s' });
        const { queue_id } = (await queued.json()) as { queue_id: string };
        await completedJob(); // the queue runs in order: once a later job is done, this one is too
        await eventually(async () => {
          const body = (await (await post('/video/retrieve', { model, queue_id })).json()) as { status: string };
          expect(body.status).toBe('COMPLETED');
        }, scaled(60_000));
        const mediaId = await mediaIdOf(queue_id);
        // Lagoon's own URL, also when the store pre-signs (a Lagoon URL of that object is revocable the same way).
        const media = (await t.app.services.media.store.info(mediaId))!;
        const token = await t.app.services.media.links.sign(media.id, new Date(Date.now() + HOUR));
        const url = `${BASE}/media/${token}`;
        expect((await get(url)).status).toBe(200);

        const revoked = await get(url, { method: 'DELETE' });
        expect(revoked.status).toBe(200);
        expect(await revoked.json()).toEqual({ success: true });
        expect((await get(url)).status).toBe(404);
        expect((await get(url, { method: 'DELETE' })).status).toBe(404);
        expect((await post('/video/retrieve', { model, queue_id })).status).toBe(404);
        expect(await stored(mediaId)).toBe(false);
        // Under /api/v1 as well, and a forged token revokes nothing.
        expect((await t.call(`/api/v1/media/${token.slice(0, -2)}AA`, { method: 'DELETE', key: null })).status).toBe(
          404,
        );
      },
      scaled(90_000),
    );

    it(
      'should give GraphQL the download URL of a download-URL model, queued and completed',
      async () => {
        const model = 'lagoon-sim-video-download';
        const queued = await t.graphql<{ queueVideo: { data: { id: string; downloadUrl: string | null } } }>(
          'mutation ($input: JSONObject!) { queueVideo(input: $input) { ... on MutationQueueVideoSuccess { data { id downloadUrl } } } }',
          { input: { model, prompt: 'graphql by url', duration: '5s' } },
          secret,
        );
        const { id, downloadUrl } = queued.data!.queueVideo.data;
        expect(downloadUrl).toEqual(expect.any(String));
        let job: { status: string; downloadUrl: string | null } | undefined;
        await eventually(async () => {
          const { data } = await t.graphql<{ job: typeof job }>(
            'query ($id: ID!) { job(id: $id) { status downloadUrl } }',
            { id },
            secret,
          );
          job = data?.job;
          expect(job?.status).toBe('COMPLETED');
        }, scaled(60_000));
        const fetched = await get(job!.downloadUrl!);
        expect(fetched.status).toBe(200);
        expect(Buffer.from(await fetched.arrayBuffer()).equals(MEDIA)).toBe(true);
        // Other models have none.
        const other = await completedJob();
        const { data } = await t.graphql<{ job: { downloadUrl: string | null } }>(
          'query ($id: ID!) { job(id: $id) { downloadUrl } }',
          { id: other },
          secret,
        );
        expect(data?.job.downloadUrl).toBeNull();
      },
      scaled(90_000),
    );

    it(
      'should copy a result the engine keeps (a URL) into the store, and retry when it cannot be fetched',
      async () => {
        let served = 0;
        const upstream = await listenLocally(
          createServer((request, response) => {
            served += 1;
            // The first fetch fails: the attempt is retried and the engine asked again.
            if (served === 1) return void response.writeHead(503).end();
            response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(MEDIA);
          }),
        );
        const byUrl: JobEngine = {
          id: 'simulator',
          simulated: true,
          run: () => Promise.resolve({ kind: 'download', url: `${upstream.url}/result.mp4`, contentType: 'video/mp4' }),
        };
        jobInternals(t.app.services.jobs.service).runner.engines.set('simulator', byUrl);
        try {
          const queue_id = await completedJob();
          expect(served).toBe(2);
          expect(await stored(await mediaIdOf(queue_id))).toBe(true);
          const done = await post('/video/retrieve', { model: 'lagoon-sim-video', queue_id });
          expect(done.headers.get('content-type')).toBe('video/mp4');
          expect(Buffer.from(await done.arrayBuffer()).equals(MEDIA)).toBe(true);
        } finally {
          jobInternals(t.app.services.jobs.service).runner.engines.set('simulator', fakeEngine);
          await upstream.close();
        }
      },
      scaled(90_000),
    );

    it(
      'should hand GraphQL a media URL from the same store',
      async () => {
        const queue_id = await completedJob();
        const { data } = await t.graphql<{ job: { status: string; media: { url: string; contentType: string } } }>(
          'query ($id: ID!) { job(id: $id) { status media { url contentType } } }',
          { id: queue_id },
          secret,
        );
        expect(data?.job.status).toBe('COMPLETED');
        const url = data!.job.media.url;
        if (store === 's3-presigned') expect(url).toContain(s3!.endpoint);
        const fetched = await get(url);
        expect(fetched.status).toBe(200);
        expect(Buffer.from(await fetched.arrayBuffer()).equals(MEDIA)).toBe(true);
      },
      scaled(90_000),
    );

    it(
      'should delete completed media past its retention, each job once when two processes sweep',
      async () => {
        const ids = [await completedJob(), await completedJob(), await completedJob()];
        const mediaIds = await Promise.all(ids.map(mediaIdOf));
        const { service } = t.app.services.jobs;
        // Nothing is old enough yet.
        expect(await service.sweepRetention(HOUR)).toBe(0);
        const later = new Date(Date.now() + 2 * HOUR);
        const [a, b] = await Promise.all([
          service.sweepRetention(HOUR, later, 1),
          service.sweepRetention(HOUR, later, 1),
        ]);
        expect(a! + b!).toBeGreaterThanOrEqual(ids.length);
        for (const queue_id of ids)
          expect((await post('/video/retrieve', { model: 'lagoon-sim-video', queue_id })).status).toBe(404);
        for (const mediaId of mediaIds) expect(await stored(mediaId)).toBe(false);
      },
      scaled(120_000),
    );
  },
);
