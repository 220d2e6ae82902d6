import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ffmpegPath } from '../../src/providers/speech/ffmpeg.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { ffprobePath } from '../helpers/audio.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { eventually } from '../helpers/eventually.ts';
import { createAccountWithKey } from '../helpers/services.ts';

/*
 * The upscale video model takes no prompt and no duration (the original's CLI sends `{model, video_url}` only): the
 * job lasts as long as its video, in whole seconds, and is quoted, held and charged for that length — over REST
 * (/video/queue, /video/quote) and GraphQL (queueVideo, quoteVideo). Every other video model still needs both.
 */

const run = promisify(execFile);
const START = 10_000_000_000n; // 10 USD
const UPSCALER = 'lagoon-sim-video-upscaler';

interface ErrorBody {
  code: string;
  issues?: { path: (string | number)[]; message: string }[];
}

/** A small H.264 MP4 (test pattern, 160×120, 10 fps) of `seconds`, made by the runtime's ffmpeg. */
async function makeMp4(seconds: number, dir: string): Promise<Buffer> {
  const file = join(dir, `clip-${seconds}.mp4`);
  await run(ffmpegPath(), [
    ...['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10'],
    ...['-t', String(seconds), '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-preset', 'ultrafast', file],
  ]);
  return readFile(file);
}

async function probe(bytes: Buffer, dir: string): Promise<{ width: number; height: number; duration: number }> {
  const file = join(dir, `out-${Date.now()}.mp4`);
  await writeFile(file, bytes);
  const { stdout } = await run(ffprobePath(), [
    ...['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=width,height:format=duration'],
    ...['-of', 'json', file],
  ]);
  const info = JSON.parse(stdout) as { streams: { width: number; height: number }[]; format: { duration: string } };
  return { ...info.streams[0]!, duration: Number(info.format.duration) };
}

const dataUrl = (bytes: Buffer) => `data:video/mp4;base64,${bytes.toString('base64')}`;

describe(`Upscale video jobs without prompt or duration (${testDatabaseKind})`, () => {
  let t: TestApp;
  let secret: string;
  let accountId: string;
  let dir: string;
  let clip: Buffer;

  const post = (path: string, body: unknown) => t.call(`/api/v1${path}`, { body, key: secret });
  const balance = async () =>
    (await t.app.services.billing.balancesOf(accountId)).find((entry) => entry.currency === 'USD')!;
  const refused = async (response: Response, field: string) => {
    expect(response.status).toBe(400);
    const error = (await response.json()) as ErrorBody;
    expect(error.issues?.map((issue) => issue.path.join('.'))).toContain(field);
  };

  beforeAll(async () => {
    t = await createTestApp({ LAGOON_JOB_WORKERS: 'true', LAGOON_JOB_RETRIES: '1', LAGOON_MAX_JSON_BYTES: '5000000' });
    ({ secret, accountId } = await createAccountWithKey(t.app.services, { credit: { USD: '10' }, type: 'INFERENCE' }));
    dir = await mkdtemp(join(tmpdir(), 'lagoon-jobs-upscale-'));
    clip = await makeMp4(3, dir);
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('should quote, queue and charge {model, video_url} by the length of the video', async () => {
    const body = { model: UPSCALER, video_url: dataUrl(clip) };
    // 0.01 USD/s × 3 s × 1 (the default 2x).
    const quote = await post('/video/quote', body);
    expect(quote.status).toBe(200);
    expect(await quote.json()).toEqual({ quote: 0.03 });

    const queued = await post('/video/queue', body);
    expect(queued.status).toBe(200);
    const { queue_id } = (await queued.json()) as { queue_id: string };
    let media: Buffer | undefined;
    await eventually(async () => {
      const response = await post('/video/retrieve', { model: UPSCALER, queue_id });
      expect(response.headers.get('content-type')).toBe('video/mp4');
      media = Buffer.from(await response.arrayBuffer());
    }, 90_000);
    const made = await probe(media!, dir);
    expect({ width: made.width, height: made.height }).toEqual({ width: 320, height: 240 });
    expect(made.duration).toBeGreaterThan(2.5);
    expect(made.duration).toBeLessThan(3.5);
    await eventually(async () => {
      expect(await balance()).toMatchObject({ amount: START - 30_000_000n, reserved: 0n });
    }, 15_000);
  }, 120_000);

  it('should take the same body through GraphQL queueVideo and quoteVideo', async () => {
    const input = { model: UPSCALER, video_url: dataUrl(clip), upscale_factor: 4 };
    const quoted = await t.graphql<{ quoteVideo: { data: number } }>(
      'query($input: JSONObject!) { quoteVideo(input: $input) { ... on QueryQuoteVideoSuccess { data } } }',
      { input },
      secret,
    );
    // 4x costs twice the 2x rate: 0.01 × 3 × 2.
    expect(quoted.data?.quoteVideo.data).toBe(0.06);
    const queued = await t.graphql<{ queueVideo: { __typename: string; data?: { status: string } } }>(
      `mutation($input: JSONObject!) { queueVideo(input: $input) {
        __typename ... on MutationQueueVideoSuccess { data { status } } } }`,
      { input },
      secret,
    );
    expect(queued.errors).toBeUndefined();
    expect(queued.data?.queueVideo.__typename).toBe('MutationQueueVideoSuccess');
  }, 60_000);

  it('should refuse a video longer than the model upscales, and a quote with neither duration nor video', async () => {
    // The job the test above queued settles in the background: start from a settled balance.
    await eventually(async () => expect((await balance()).reserved).toBe(0n), 15_000);
    const before = (await balance()).amount;
    const long = await makeMp4(16, dir);
    await refused(await post('/video/queue', { model: UPSCALER, video_url: dataUrl(long) }), 'video_url');
    await refused(await post('/video/quote', { model: UPSCALER }), 'duration');
    await refused(await post('/video/queue', { model: UPSCALER }), 'video_url');
    expect((await balance()).amount).toBe(before);
  }, 60_000);

  it('should still need prompt and duration from every other video model', async () => {
    await refused(await post('/video/queue', { model: 'lagoon-sim-video', duration: '5s' }), 'prompt');
    await refused(await post('/video/queue', { model: 'lagoon-sim-video', prompt: 'a lagoon' }), 'duration');
    await refused(await post('/video/quote', { model: 'lagoon-sim-video' }), 'duration');
  });
});
