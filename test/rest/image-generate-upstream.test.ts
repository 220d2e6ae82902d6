import { createServer } from 'node:http';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.ts';
import { eventually } from '../helpers/eventually.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { useImageApp } from '../helpers/image-app.ts';
import { noisyPng, type FakeImageUpstream } from '../helpers/image-upstreams.ts';
import { listenLocally } from '../helpers/local-server.ts';
import { scaled } from '../helpers/time-scale.ts';

describe(`REST POST /api/v1/image/generate on an AUTOMATIC1111 upstream (${testDatabaseKind})`, () => {
  const app = useImageApp(10);
  const { generateJson, balance, usage, settledUsage } = app;
  let t: TestApp;
  let upstream: FakeImageUpstream;
  let secret: string;
  let sent: string;
  beforeAll(async () => {
    ({ t, upstream, secret } = app.state);
    sent = await noisyPng(512, 512);
  });

  it('should send the A1111 request shape and post-process its pictures', async () => {
    upstream.requests.length = 0;
    upstream.grid = true;
    const { status, body } = await generateJson({
      model: 'test-a1111-image',
      prompt: 'a harbour',
      negative_prompt: 'fog',
      width: 640,
      height: 384,
      seed: 11,
      steps: 25,
      cfg_scale: 6.5,
      variants: 2,
      format: 'jpeg',
      style_preset: 'Cinematic',
    });
    upstream.grid = false;
    expect(status).toBe(200);
    const txt2img = upstream.requests.find((request) => request.path === '/sdapi/v1/txt2img')!;
    expect(txt2img.body).toMatchObject({
      prompt: 'a harbour',
      negative_prompt: 'fog',
      width: 640,
      height: 384,
      seed: 11,
      steps: 25,
      cfg_scale: 6.5,
      batch_size: 2,
      styles: ['Cinematic'],
      override_settings: { sd_model_checkpoint: 'sdxl-base.safetensors' },
    });
    expect(body.images).toHaveLength(2);
    for (const image of body.images) {
      const meta = await sharp(Buffer.from(image, 'base64')).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 640, 384]);
    }
  });

  it("should answer large A1111 pictures of a batch in the upstream's own base64, byte for byte", async () => {
    upstream.grid = true;
    upstream.queue({ kind: 'noisy' });
    const { status, body } = await generateJson({
      model: 'test-a1111-image',
      prompt: 'static',
      width: 512,
      height: 512,
      variants: 2,
      format: 'png',
    });
    upstream.grid = false;
    expect(status).toBe(200);
    expect(body.images).toEqual(Array.from({ length: 2 }, () => sent));
  });

  it('should blur a picture the A1111 safety checker flagged', async () => {
    upstream.queue({ kind: 'adult' });
    const { status, headers } = await generateJson({
      model: 'test-a1111-image',
      prompt: 'flagged',
      width: 256,
      height: 256,
    });
    expect(status).toBe(200);
    expect(headers.get('x-is-blurred')).toBe('true');
  });

  it.each([
    [{ kind: 'status', status: 500 } as const, 502],
    [{ kind: 'status', status: 429 } as const, 503],
    [{ kind: 'reset' } as const, 502],
    [{ kind: 'malformed' } as const, 502],
    [{ kind: 'delay', ms: 8_000 } as const, 504],
  ])(
    'should answer an upstream failure (%j) with %i and an error body, charging nothing',
    async (behavior, code) => {
      const before = await balance();
      const entries = (await settledUsage()).length;
      upstream.queue(behavior);
      const { status, body } = await generateJson({
        model: 'test-a1111-image',
        prompt: 'fails',
        width: 256,
        height: 256,
      });
      expect(status).toBe(code);
      expect(typeof body.error).toBe('string');
      expect(body.error).not.toContain('127.0.0.1');
      const after = await balance();
      expect(after.amount).toBe(before.amount);
      expect(after.reserved).toBe(0n);
      expect(await settledUsage()).toHaveLength(entries);
    },
    20_000,
  );

  it(
    'should charge nothing when the client goes away while the engine works',
    async () => {
      // Over a real port, as `npm start` serves it: the client's disconnect reaches the engine call.
      const listening = await listenLocally(createServer(t.app.nodeListener));
      try {
        const before = await balance();
        const entries = (await settledUsage()).length;
        const calls = upstream.requests.length;
        upstream.queue({ kind: 'delay', ms: 1_000 });
        const controller = new AbortController();
        const pending = fetch(`${listening.url}/api/v1/image/generate`, {
          method: 'POST',
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'test-a1111-image', prompt: 'gone', width: 256, height: 256 }),
          signal: controller.signal,
        }).catch((error: unknown) => error);
        await eventually(async () => expect(upstream.requests.length).toBeGreaterThan(calls));
        controller.abort();
        expect(await pending).toBeInstanceOf(Error);
        await eventually(async () => expect((await balance()).reserved).toBe(0n));
        // Well after the engine would have answered: still nothing charged.
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        expect((await balance()).amount).toBe(before.amount);
        expect(await settledUsage()).toHaveLength(entries);
      } finally {
        await listening.close();
      }
    },
    scaled(30_000),
  );

  it('should keep the balance change equal to the sum of usage entries, each price × units (upstream runs)', async () => {
    let entries: Awaited<ReturnType<typeof usage>> = [];
    await eventually(async () => {
      entries = await usage();
      const charged = entries.reduce((sum, entry) => sum - entry.amount, 0n);
      expect(10_000_000_000n - (await balance()).amount).toBe(charged);
    }, 15_000);
    expect(entries.length).toBeGreaterThanOrEqual(2);
    for (const entry of entries) {
      const perUnit = BigInt(Math.round(Number(entry.price_per_unit_usd) * 1e9));
      expect(-entry.amount).toBe(perUnit * BigInt(entry.units));
    }
  });
});
