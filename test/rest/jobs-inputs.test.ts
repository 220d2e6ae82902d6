import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ffmpegPath } from '../../src/providers/speech/ffmpeg.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { ffprobePath } from '../helpers/audio.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { eventually } from '../helpers/eventually.ts';
import { createAccountWithKey } from '../helpers/services.ts';
import { scaled } from '../helpers/time-scale.ts';

/*
 * Remote media of video jobs over HTTP: a data-URL MP4 given to the upscale model is fetched, probed, carried to
 * the worker and scaled; a URL to loopback or a private network, a file too large, the wrong type or length are
 * 400s naming the field, and none of them holds or charges anything.
 */

const run = promisify(execFile);
const START = 10_000_000_000n; // 10 USD
const UPSCALER = 'lagoon-sim-video-upscaler';

interface ErrorBody {
  code: string;
  issues?: { path: (string | number)[]; message: string }[];
}

/** A small H.264 MP4 (test pattern, 160×120) of `seconds`, made by the runtime's ffmpeg. */
async function makeMp4(seconds: number, dir: string): Promise<Buffer> {
  const file = join(dir, `clip-${seconds}.mp4`);
  await run(ffmpegPath(), [
    ...['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', `testsrc=size=160x120:rate=10`],
    ...['-t', String(seconds), '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-preset', 'ultrafast', file],
  ]);
  return readFile(file);
}

async function videoSize(bytes: Buffer, dir: string): Promise<{ width: number; height: number }> {
  const file = join(dir, `out-${Date.now()}.mp4`);
  await writeFile(file, bytes);
  const { stdout } = await run(ffprobePath(), [
    ...['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=width,height', '-of', 'json', file],
  ]);
  const [stream] = (JSON.parse(stdout) as { streams: { width: number; height: number }[] }).streams;
  return stream!;
}

const dataUrl = (type: string, bytes: Buffer) => `data:${type};base64,${bytes.toString('base64')}`;

describe(`REST video job remote inputs (${testDatabaseKind})`, () => {
  let t: TestApp;
  let secret: string;
  let accountId: string;
  let dir: string;
  let mp4: Buffer;

  const post = (path: string, body: unknown) => t.call(`/api/v1${path}`, { body, key: secret });
  const balance = async () =>
    (await t.app.services.billing.balancesOf(accountId)).find((entry) => entry.currency === 'USD')!;

  /** A refused queue: 400, the field named, nothing held or charged. */
  async function expectRefused(body: unknown, field: string): Promise<ErrorBody> {
    const before = (await balance()).amount;
    const response = await post('/video/queue', body);
    expect(response.status).toBe(400);
    const error = (await response.json()) as ErrorBody;
    expect(error.issues?.map((issue) => issue.path.join('.'))).toContain(field);
    expect(await balance()).toMatchObject({ amount: before, reserved: 0n });
    return error;
  }

  beforeAll(async () => {
    // The oversized-picture case (a 21 MB picture as a data URL) fits /video/queue's media body limit.
    t = await createTestApp({ LAGOON_JOB_WORKERS: 'true', LAGOON_JOB_RETRIES: '1' });
    ({ secret, accountId } = await createAccountWithKey(t.app.services, { credit: { USD: '10' }, type: 'INFERENCE' }));
    dir = await mkdtemp(join(tmpdir(), 'lagoon-jobs-inputs-'));
    mp4 = await makeMp4(5, dir);
  }, scaled(120_000));
  afterAll(async () => {
    await t?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    'should upscale a data-URL MP4: queued, completed at twice the size, charged the quote',
    async () => {
      const job = {
        model: UPSCALER,
        prompt: 'sharper',
        duration: '5s',
        upscale_factor: 2,
        video_url: dataUrl('video/mp4', mp4),
      };
      const queued = await post('/video/queue', job);
      expect(queued.status).toBe(200);
      const { queue_id } = (await queued.json()) as { queue_id: string };

      let media: Buffer | undefined;
      await eventually(async () => {
        const response = await post('/video/retrieve', { model: UPSCALER, queue_id });
        expect(response.status).toBe(200);
        expect(response.headers.get('content-type')).toBe('video/mp4');
        media = Buffer.from(await response.arrayBuffer());
      }, scaled(90_000));
      expect(await videoSize(media!, dir)).toEqual({ width: 320, height: 240 });
      // 0.01 USD/s × 5 s × 1 (2x): charged once, nothing left held.
      await eventually(async () => {
        expect(await balance()).toMatchObject({ amount: START - 50_000_000n, reserved: 0n });
      }, 15_000);
    },
    scaled(120_000),
  );

  it(
    'should refuse image_url to loopback or a private address, naming the field',
    async () => {
      const base = { model: 'lagoon-sim-video', prompt: 'a lagoon', duration: '5s' };
      const refused = await expectRefusedFrom(base, { image_url: 'http://127.0.0.1:9/a.png' }, 'image_url');
      expect(refused.issues?.[0]?.message).toMatch(/could not be fetched/);
      await expectRefusedFrom(base, { image_url: 'http://10.0.0.1/a.png' }, 'image_url');
      await expectRefusedFrom(base, { image_url: 'http://169.254.169.254/latest/meta-data' }, 'image_url');
      await expectRefusedFrom(base, { reference_image_urls: ['http://[::1]/x.png'] }, 'reference_image_urls[0]');
    },
    scaled(60_000),
  );

  it(
    'should refuse an input too large for its role, naming the field',
    async () => {
      const big = Buffer.alloc(21 * 1024 * 1024, 1);
      const error = await expectRefusedFrom(
        { model: 'lagoon-sim-video', prompt: 'a lagoon', duration: '5s' },
        { image_url: dataUrl('image/png', big) },
        'image_url',
      );
      expect(error.issues?.[0]?.message).toMatch(/at most 20 MB/);
    },
    scaled(60_000),
  );

  it(
    'should refuse the wrong type of media and a video for an image, naming the field',
    async () => {
      const base = { model: 'lagoon-sim-video', prompt: 'a lagoon', duration: '5s' };
      await expectRefusedFrom(base, { image_url: dataUrl('image/png', Buffer.from('not a picture')) }, 'image_url');
      await expectRefusedFrom(base, { image_url: dataUrl('video/mp4', mp4) }, 'image_url');
      const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#08f' } })
        .png()
        .toBuffer();
      await expectRefusedFrom(
        { model: UPSCALER, prompt: 'sharper', duration: '5s' },
        { video_url: dataUrl('image/png', png) },
        'video_url',
      );
    },
    scaled(60_000),
  );

  it(
    'should refuse a reference video longer than 15 s, naming the entry',
    async () => {
      const long = await makeMp4(16, dir);
      const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#0a0' } })
        .png()
        .toBuffer();
      await expectRefusedFrom(
        { model: 'lagoon-sim-video', prompt: 'a lagoon', duration: '5s' },
        { reference_image_urls: [dataUrl('image/png', png)], reference_video_urls: [dataUrl('video/mp4', long)] },
        'reference_video_urls[0]',
      );
    },
    scaled(60_000),
  );

  it('should refuse reference audio without a reference image or video', async () => {
    await expectRefusedFrom(
      { model: 'lagoon-sim-video', prompt: 'a lagoon', duration: '5s' },
      { reference_audio_urls: ['data:audio/wav;base64,UklGRg=='] },
      'reference_audio_urls',
    );
  });

  async function expectRefusedFrom(base: object, extra: object, field: string): Promise<ErrorBody> {
    return expectRefused({ ...base, ...extra }, field);
  }
});
