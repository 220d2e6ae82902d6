import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseNano } from '../../src/billing/money.ts';
import type { JobEngine } from '../../src/providers/jobs/job-engine.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { ffprobePath, probeAudio } from '../helpers/audio.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { eventually } from '../helpers/eventually.ts';
import { createAccountWithKey } from '../helpers/services.ts';
import { scaled } from '../helpers/time-scale.ts';
import { jobInternals } from '../../src/media/jobs/job.wiring.ts';

/*
 * Queued jobs over HTTP, as a client polls them: quote → queue → retrieve until the media arrives (ffprobe reads
 * it) → complete → 404. The quote is what is charged, the balance change is the usage entry, nothing is queued
 * without funds, another account's job is invisible, and a job whose engine fails is FAILED, uncharged, released.
 */

const run = promisify(execFile);
const START = 10_000_000_000n; // 10 USD

interface ErrorBody {
  code: string;
  issues?: { path: (string | number)[] }[];
}

async function probeVideo(bytes: Buffer): Promise<{ width: number; height: number; duration: number; audio: boolean }> {
  const dir = await mkdtemp(join(tmpdir(), 'lagoon-probe-'));
  try {
    const file = join(dir, 'clip.mp4');
    await writeFile(file, bytes);
    const { stdout } = await run(ffprobePath(), [
      ...['-v', 'error', '-show_entries', 'stream=codec_type,width,height:format=duration', '-of', 'json', file],
    ]);
    const parsed = JSON.parse(stdout) as {
      streams: { codec_type: string; width?: number; height?: number }[];
      format: { duration: string };
    };
    const video = parsed.streams.find((s) => s.codec_type === 'video')!;
    return {
      width: video.width!,
      height: video.height!,
      duration: Number(parsed.format.duration),
      audio: parsed.streams.some((s) => s.codec_type === 'audio'),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe(`REST queued jobs (${testDatabaseKind})`, () => {
  let t: TestApp;
  let secret: string;
  let accountId: string;

  const post = (path: string, body: unknown, key = secret) => t.call(`/api/v1${path}`, { body, key });
  const balance = async (id = accountId) =>
    (await t.app.services.billing.balancesOf(id)).find((entry) => entry.currency === 'USD')!;
  const usage = () =>
    t.app.database.db.selectFrom('usage_entries').selectAll().where('account_id', '=', accountId).execute();

  /** Polls retrieve until the job is no longer running; returns the last answer. */
  async function poll(kind: 'audio' | 'video', model: string, queueId: string): Promise<Response> {
    let last: Response | undefined;
    await eventually(async () => {
      last = await post(`/${kind}/retrieve`, { model, queue_id: queueId });
      expect(last.status).toBe(200);
      if (last.headers.get('content-type')?.startsWith('application/json')) {
        const body = (await last.clone().json()) as { status: string };
        expect(body.status).toBe('PROCESSING');
        if (body.status !== 'FAILED') throw new Error(`still ${body.status}`);
      }
    }, scaled(90_000));
    return last!;
  }

  beforeAll(async () => {
    t = await createTestApp({ LAGOON_JOB_WORKERS: 'true', LAGOON_JOB_RETRIES: '1' });
    ({ secret, accountId } = await createAccountWithKey(t.app.services, { credit: { USD: '10' }, type: 'INFERENCE' }));
  }, scaled(120_000));
  afterAll(async () => t?.close());

  it(
    'should quote, queue, run, deliver an MP4, charge the quote once and delete on complete',
    async () => {
      const job = { model: 'lagoon-sim-video', prompt: 'a lagoon at dawn', duration: '5s', resolution: '480p' };
      const quoted = await post('/video/quote', job);
      expect(quoted.status).toBe(200);
      const { quote } = (await quoted.json()) as { quote: number };
      expect(quote).toBeCloseTo(0.3, 9); // 0.05 USD/s × 5 s × 1 (480p) × 1.2 (audio)
      expect((await balance()).amount).toBe(START);

      const queued = await post('/video/queue', job);
      expect(queued.status).toBe(200);
      const body = (await queued.json()) as { model: string; queue_id: string };
      expect(body).toEqual({ model: 'lagoon-sim-video', queue_id: expect.any(String) });

      const done = await poll('video', 'lagoon-sim-video', body.queue_id);
      expect(done.headers.get('content-type')).toBe('video/mp4');
      const probed = await probeVideo(Buffer.from(await done.arrayBuffer()));
      expect(probed.height).toBe(480);
      expect(probed.width).toBe(854);
      expect(probed.duration).toBeGreaterThan(4.5);
      expect(probed.duration).toBeLessThan(5.5);
      expect(probed.audio).toBe(true);

      const charged = parseNano(quote);
      let entries: Awaited<ReturnType<typeof usage>> = [];
      await eventually(async () => {
        entries = await usage();
        expect(entries).toHaveLength(1);
        expect(START - (await balance()).amount).toBe(charged);
      }, 15_000);
      expect(entries[0]).toMatchObject({
        amount: -charged,
        model_id: 'lagoon-sim-video',
        model_type: 'VIDEO',
        unit_type: 'seconds',
        units: '5',
      });
      expect((await balance()).reserved).toBe(0n);

      const completed = await post('/video/complete', { model: 'lagoon-sim-video', queue_id: body.queue_id });
      expect(completed.status).toBe(200);
      expect(await completed.json()).toEqual({ success: true });
      const gone = await post('/video/retrieve', { model: 'lagoon-sim-video', queue_id: body.queue_id });
      expect(gone.status).toBe(404);
      expect(((await gone.json()) as ErrorBody).code).toBe('MEDIA_NOT_FOUND');
      expect((await post('/video/complete', { model: 'lagoon-sim-video', queue_id: body.queue_id })).status).toBe(404);
      expect(await usage()).toHaveLength(1);
    },
    scaled(120_000),
  );

  it(
    'should charge a job once however often it is delivered again after it completed',
    async () => {
      const job = { model: 'lagoon-sim-video', prompt: 'twice', duration: '5s' };
      const { queue_id } = (await (await post('/video/queue', job)).json()) as { queue_id: string };
      await poll('video', 'lagoon-sim-video', queue_id);
      const count = async () => (await usage()).filter((entry) => entry.notes.includes(queue_id)).length;
      await eventually(async () => expect(await count()).toBe(1), 15_000);
      const before = await balance();
      // pg-boss delivering it again (a retry after a crash past the COMPLETED transition), or a stale duplicate.
      const runner = jobInternals(t.app.services.jobs.service).runner;
      for (const retryCount of [0, 1, 5])
        await runner.run(queue_id, { retryCount, lastAttempt: false, signal: new AbortController().signal });
      await t.app.services.billing.flush(accountId);
      expect(await count()).toBe(1);
      expect((await balance()).amount).toBe(before.amount);
    },
    scaled(120_000),
  );

  it(
    'should fail a job nothing finishes in time, release its hold, and not charge a late answer',
    async () => {
      const engines = jobInternals(t.app.services.jobs.service).runner.engines;
      const simulator = engines.get('simulator')!;
      let finish: () => void = () => undefined;
      let started = false;
      const stuck: JobEngine = {
        id: 'simulator',
        simulated: true,
        async run(model, request, context) {
          started = true;
          await new Promise<void>((resolve) => (finish = resolve));
          return simulator.run(model, request, context);
        },
      };
      engines.set('simulator', stuck);
      try {
        const before = await balance();
        const entriesBefore = (await usage()).length;
        const job = { model: 'lagoon-sim-video', prompt: 'stuck', duration: '5s' };
        const { queue_id } = (await (await post('/video/queue', job)).json()) as { queue_id: string };
        await eventually(async () => expect(started).toBe(true), 60_000);
        const later = new Date(Date.now() + 7 * 24 * 3_600_000);
        expect(
          await jobInternals(t.app.services.jobs.service).runner.sweepStale({ timeoutMs: 1_000, retries: 0 }, later),
        ).toBe(1);
        const failed = await post('/video/retrieve', { model: 'lagoon-sim-video', queue_id });
        expect(await failed.json()).toMatchObject({ status: 'FAILED' });
        expect((await balance()).reserved).toBe(0n);
        finish(); // the engine answers after all: the job stays FAILED and nothing is charged
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        await t.app.services.billing.flush(accountId);
        expect(await (await post('/video/retrieve', { model: 'lagoon-sim-video', queue_id })).json()).toMatchObject({
          status: 'FAILED',
        });
        expect((await balance()).amount).toBe(before.amount);
        expect(await usage()).toHaveLength(entriesBefore);
      } finally {
        finish();
        engines.set('simulator', simulator);
      }
    },
    scaled(120_000),
  );

  it(
    'should make music of the requested length',
    async () => {
      const job = { model: 'lagoon-sim-music', prompt: 'a calm tune', duration_seconds: 5 };
      const { quote } = (await (await post('/audio/quote', job)).json()) as { quote: number };
      expect(quote).toBeCloseTo(0.02, 9);
      const { queue_id } = (await (await post('/audio/queue', job)).json()) as { queue_id: string };
      const done = await poll('audio', 'lagoon-sim-music', queue_id);
      expect(done.headers.get('content-type')).toBe('audio/mpeg');
      const probed = await probeAudio(new Uint8Array(await done.arrayBuffer()));
      expect(probed.codec).toBe('mp3');
      expect(probed.duration).toBeGreaterThan(4.5);
      expect(probed.duration).toBeLessThan(5.5);
      // delete_media_on_completion: sent once, then gone.
      const again = await post('/audio/retrieve', {
        model: 'lagoon-sim-music',
        queue_id,
        delete_media_on_completion: true,
      });
      expect(again.headers.get('content-type')).toBe('audio/mpeg');
      // Deleted once the last byte is sent (not before: a client that breaks off can ask again).
      expect((await again.arrayBuffer()).byteLength).toBeGreaterThan(0);
      expect((await post('/audio/retrieve', { model: 'lagoon-sim-music', queue_id })).status).toBe(404);
    },
    scaled(120_000),
  );

  it(
    'should answer 404 for unknown jobs and for another account’s job',
    async () => {
      const job = { model: 'lagoon-sim-video', prompt: 'private', duration: '5s' };
      const { queue_id } = (await (await post('/video/queue', job)).json()) as { queue_id: string };
      const other = await createAccountWithKey(t.app.services, { credit: { USD: '1' }, type: 'INFERENCE' });
      for (const path of ['/video/retrieve', '/video/complete']) {
        const response = await post(path, { model: 'lagoon-sim-video', queue_id }, other.secret);
        expect(response.status).toBe(404);
        expect(((await response.json()) as ErrorBody).code).toBe('MEDIA_NOT_FOUND');
      }
      for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
        expect((await post('/video/retrieve', { model: 'lagoon-sim-video', queue_id: id })).status).toBe(404);
      }
      // A video job is not an audio job.
      expect((await post('/audio/retrieve', { model: 'lagoon-sim-music', queue_id })).status).toBe(404);
      await poll('video', 'lagoon-sim-video', queue_id);
    },
    scaled(120_000),
  );

  it('should refuse bad input with 400 naming the field, before holding anything', async () => {
    const missing = await post('/video/queue', { model: 'lagoon-sim-video', duration: '5s' });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as ErrorBody).issues?.[0]?.path).toEqual(['prompt']);
    const noModel = await post('/audio/queue', { prompt: 'x' });
    expect(noModel.status).toBe(400);
    expect(((await noModel.json()) as ErrorBody).issues?.[0]?.path).toEqual(['model']);
    const wrongType = await post('/audio/queue', { model: 'lagoon-sim-video', prompt: 'x' });
    expect(wrongType.status).toBe(400);
    expect((await post('/video/retrieve', { model: 'lagoon-sim-video' })).status).toBe(400);
  });

  it('should answer 402 without funds and queue nothing', async () => {
    const poor = await createAccountWithKey(t.app.services, { type: 'INFERENCE' });
    const response = await post(
      '/video/queue',
      { model: 'lagoon-sim-video', prompt: 'x', duration: '5s' },
      poor.secret,
    );
    expect(response.status).toBe(402);
    const rows = await t.app.database.db
      .selectFrom('jobs')
      .select('id')
      .where('account_id', '=', poor.accountId)
      .execute();
    expect(rows).toHaveLength(0);
  });

  it(
    'should fail a job whose engine keeps failing: FAILED, not charged, hold released',
    async () => {
      const engines = jobInternals(t.app.services.jobs.service).runner.engines;
      const simulator = engines.get('simulator')!;
      let runs = 0;
      const failing: JobEngine = {
        id: 'simulator',
        simulated: true,
        run: () => {
          runs += 1;
          return Promise.reject(new Error('engine exploded'));
        },
      };
      engines.set('simulator', failing);
      try {
        const before = await balance();
        const entriesBefore = (await usage()).length;
        const job = { model: 'lagoon-sim-video', prompt: 'doomed', duration: '5s' };
        const { queue_id } = (await (await post('/video/queue', job)).json()) as { queue_id: string };
        let failed: { status: string; error: string } | undefined;
        await eventually(async () => {
          const response = await post('/video/retrieve', { model: 'lagoon-sim-video', queue_id });
          failed = (await response.json()) as { status: string; error: string };
          expect(failed.status).toBe('FAILED');
        }, scaled(90_000));
        // The timing fields the original's clients read are there on a failed job too.
        expect(failed).toStrictEqual({
          status: 'FAILED',
          error: expect.any(String),
          average_execution_time: expect.any(Number),
          execution_duration: expect.any(Number),
        });
        expect(failed?.error).toBeTruthy();
        expect(failed?.error).not.toContain('exploded'); // internal errors stay internal
        expect(runs).toBe(2); // the first attempt and one retry (LAGOON_JOB_RETRIES=1)
        await eventually(async () => expect((await balance()).reserved).toBe(0n), 15_000);
        expect((await balance()).amount).toBe(before.amount);
        expect(await usage()).toHaveLength(entriesBefore);
      } finally {
        engines.set('simulator', simulator);
      }
    },
    scaled(120_000),
  );
});
