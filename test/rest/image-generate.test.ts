import { gunzipSync } from 'node:zlib';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatNano } from '../../src/billing/money.ts';
import type { TestApp } from '../helpers/app.ts';
import { eventually } from '../helpers/eventually.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { CENT, useImageApp, type ErrorBody, type GenerateBody } from '../helpers/image-app.ts';
import type { FakeImageUpstream } from '../helpers/image-upstreams.ts';
import { createAccountWithKey } from '../helpers/services.ts';

describe(`REST POST /api/v1/image/generate (${testDatabaseKind})`, () => {
  const app = useImageApp(10);
  const { generate, generateJson, balance, usage, settledUsage, newEntries } = app;
  let t: TestApp;
  let upstream: FakeImageUpstream;
  beforeAll(() => {
    ({ t, upstream } = app.state);
  });

  it('should generate one webp at the default aspect ratio with a random seed, without metadata, charging 0.01 USD', async () => {
    const before = await balance();
    const added = await newEntries();
    const { status, headers, body } = await generateJson({
      model: 'lagoon-sim-image-aspect',
      prompt: 'a lighthouse at dusk',
    });
    expect(status).toBe(200);
    expect(Object.keys(body)).toEqual(['id', 'images', 'timing', 'request']);
    expect(body.images).toHaveLength(1);
    const picture = sharp(Buffer.from(body.images[0]!, 'base64'));
    const meta = await picture.metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 1024, 1024]);
    expect(meta.exif).toBeUndefined();
    expect(meta.xmp).toBeUndefined();
    expect(Object.keys(body.timing).sort()).toEqual([
      'inferenceDuration',
      'inferencePreprocessingTime',
      'inferenceQueueTime',
      'total',
    ]);
    const seed = body.request.seed as number;
    expect(seed).not.toBe(0);
    expect(headers.get('x-image-seed')).toBe(String(seed));
    expect(body.request).toMatchObject({
      model: 'lagoon-sim-image-aspect',
      aspect_ratio: '1:1',
      width: 1024,
      steps: 8,
    });
    expect(headers.get('x-is-blurred')).toBeNull();
    const after = await balance();
    expect(before.amount - after.amount).toBe(CENT);
    expect(headers.get('x-balance-usd')).toBe(formatNano(after.amount));
    const entries = await added();
    expect(entries).toHaveLength(1);
    const entry = entries[0]!;
    expect(entry).toMatchObject({
      sku: 'lagoon-sim-image-aspect-image-generation',
      model_id: 'lagoon-sim-image-aspect',
      model_type: 'IMAGE',
      unit_type: 'images',
      units: '1',
      amount: -CENT,
      currency: 'USD',
    });
    expect(entry.notes).not.toContain('lighthouse');
  });

  it('should make the same pictures for the same seed, and charge every variant', async () => {
    const body = {
      model: 'lagoon-sim-image-aspect',
      prompt: 'three foxes',
      seed: 42,
      variants: 3,
      format: 'png',
      aspect_ratio: '16:9',
    };
    const before = await balance();
    const added = await newEntries();
    const first = await generateJson(body);
    const second = await generateJson(body);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-image-seed')).toBe('42');
    expect(first.body.images).toHaveLength(3);
    expect(first.body.images).toEqual(second.body.images);
    expect(new Set(first.body.images).size).toBe(3); // seeds 42, 43, 44
    for (const image of first.body.images) {
      const meta = await sharp(Buffer.from(image, 'base64')).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['png', 1368, 768]);
    }
    expect(before.amount - (await balance()).amount).toBe(6n * CENT);
    expect((await added(2)).map((entry) => [entry.units, entry.amount])).toEqual([
      ['3', -3n * CENT],
      ['3', -3n * CENT],
    ]);
  });

  it('should embed prompt, model and seed in EXIF and XMP only when asked', async () => {
    const { status, body } = await generateJson({
      model: 'test-pixel-image',
      prompt: 'a red bicycle',
      seed: 7,
      format: 'jpeg',
      width: 512,
      height: 256,
      embed_exif_metadata: true,
    });
    expect(status).toBe(200);
    const meta = await sharp(Buffer.from(body.images[0]!, 'base64')).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 512, 256]);
    expect(meta.exif?.toString('latin1')).toContain('a red bicycle');
    const xmp = meta.xmp?.toString('utf8') ?? '';
    expect(xmp).toContain('a red bicycle');
    expect(xmp).toContain('test-pixel-image');
    expect(xmp).toContain('<lagoon:seed>7</lagoon:seed>');
    expect(body.request).toMatchObject({ width: 512, height: 256, steps: 10, aspect_ratio: null });
  });

  it('should answer return_binary with the picture itself, never compressed', async () => {
    const response = await generate(
      { model: 'lagoon-sim-image', prompt: 'binary', format: 'png', return_binary: true, seed: 3 },
      { 'accept-encoding': 'gzip, br' },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/png');
    expect(response.headers.get('content-encoding')).toBeNull();
    expect(response.headers.get('x-image-seed')).toBe('3');
    const meta = await sharp(Buffer.from(await response.arrayBuffer())).metadata();
    expect([meta.format, meta.width]).toEqual(['png', 1024]);
  });

  it('should compress the JSON answer for Accept-Encoding gzip', async () => {
    const response = await generate({ model: 'lagoon-sim-image', prompt: 'zipped' }, { 'accept-encoding': 'gzip' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-encoding')).toBe('gzip');
    const body = JSON.parse(gunzipSync(Buffer.from(await response.arrayBuffer())).toString('utf8')) as GenerateBody;
    expect(body.images).toHaveLength(1);
  });

  it('should blur adult pictures in safe mode (x-is-blurred) and not without it', async () => {
    const prompt = 'a portrait [simulate:adult]';
    const safe = await generateJson({
      model: 'lagoon-sim-image',
      prompt,
      seed: 9,
      format: 'png',
      hide_watermark: true,
    });
    const open = await generateJson({
      model: 'lagoon-sim-image',
      prompt,
      seed: 9,
      format: 'png',
      hide_watermark: true,
      safe_mode: false,
    });
    expect(safe.headers.get('x-is-blurred')).toBe('true');
    expect(open.headers.get('x-is-blurred')).toBeNull();
    const sharpness = async (image: string) => (await sharp(Buffer.from(image, 'base64')).stats()).sharpness;
    expect(await sharpness(safe.body.images[0]!)).toBeLessThan((await sharpness(open.body.images[0]!)) / 2);
  });

  it('should size and price resolution-tier models by aspect_ratio and resolution', async () => {
    const before = await balance();
    const added = await newEntries();
    const { status, body } = await generateJson({
      model: 'test-tier-image',
      prompt: 'mountains',
      aspect_ratio: '1:1',
      resolution: '2K',
      format: 'png',
    });
    expect(status).toBe(200);
    const meta = await sharp(Buffer.from(body.images[0]!, 'base64')).metadata();
    expect([meta.width, meta.height]).toEqual([2048, 2048]);
    expect(before.amount - (await balance()).amount).toBe(5n * CENT);
    expect((await added())[0]).toMatchObject({ sku: 'test-tier-image-image-2k', units: '1', amount: -5n * CENT });
  });

  it('should accept a style from GET /image/styles and refuse others', async () => {
    const styles = (await (await t.call('/api/v1/image/styles', { key: null })).json()) as {
      object: string;
      data: string[];
    };
    expect(styles.object).toBe('list');
    expect(styles.data).toContain('Anime');
    const ok = await generateJson({ model: 'lagoon-sim-image', prompt: 'a cat', style_preset: 'Pixel Art' });
    expect(ok.status).toBe(200);
    const a1111Styles = (await (await t.call('/api/v1/image/styles?model=test-a1111-image')).json()) as {
      data: string[];
    };
    expect(a1111Styles.data).toEqual(upstream.styles);
  });

  it.each([
    [{ prompt: 'x' }, 'model'],
    [{ model: 'lagoon-sim-image' }, 'prompt'],
    [{ model: 'lagoon-sim-image', prompt: '' }, 'prompt'],
    [{ model: 'lagoon-sim-image', prompt: 'x'.repeat(7_501) }, 'prompt'],
    [{ model: 'test-pixel-image', prompt: 'x'.repeat(101) }, 'prompt'],
    [{ model: 'lagoon-sim-image', prompt: 'x', negative_prompt: 'x'.repeat(7_501) }, 'negative_prompt'],
    [{ model: 'lagoon-sim-image', prompt: 'x', cfg_scale: 0 }, 'cfg_scale'],
    [{ model: 'lagoon-sim-image', prompt: 'x', cfg_scale: 20.5 }, 'cfg_scale'],
    [{ model: 'lagoon-sim-image', prompt: 'x', format: 'gif' }, 'format'],
    [{ model: 'test-pixel-image', prompt: 'x', width: 1_281 }, 'width'],
    [{ model: 'test-pixel-image', prompt: 'x', height: 0 }, 'height'],
    [{ model: 'test-pixel-image', prompt: 'x', width: 1_000 }, 'width'],
    [{ model: 'test-pixel-image', prompt: 'x', aspect_ratio: '1:1' }, 'aspect_ratio'],
    [{ model: 'test-pixel-image', prompt: 'x', resolution: '1K' }, 'resolution'],
    [{ model: 'lagoon-sim-image-aspect', prompt: 'x', width: 512 }, 'width'],
    [{ model: 'lagoon-sim-image-aspect', prompt: 'x', aspect_ratio: '4:3' }, 'aspect_ratio'],
    [{ model: 'lagoon-sim-image', prompt: 'x', resolution: '1K' }, 'resolution'],
    [{ model: 'test-tier-image', prompt: 'x', resolution: '8K' }, 'resolution'],
    [{ model: 'test-tier-image', prompt: 'x', height: 512 }, 'height'],
    [{ model: 'lagoon-sim-image', prompt: 'x', inpaint: { mask: 'x' } }, 'inpaint'],
    [{ model: 'lagoon-sim-image', prompt: 'x', lora_strength: 101 }, 'lora_strength'],
    [{ model: 'lagoon-sim-image', prompt: 'x', variants: 5 }, 'variants'],
    [{ model: 'lagoon-sim-image', prompt: 'x', variants: 2, return_binary: true }, 'variants'],
    [{ model: 'lagoon-sim-image', prompt: 'x', seed: 1_000_000_000 }, 'seed'],
    [{ model: 'lagoon-sim-image', prompt: 'x', steps: 31 }, 'steps'],
    [{ model: 'test-pixel-image', prompt: 'x', steps: 0 }, 'steps'],
    [{ model: 'lagoon-sim-image', prompt: 'x', style_preset: 'Baroque' }, 'style_preset'],
    [{ model: 'lagoon-sim-image', prompt: 'x', safe_mode: 'yes' }, 'safe_mode'],
    [{ model: 'lagoon-sim-image', prompt: 'x', enable_web_search: true }, 'enable_web_search'],
  ])('should answer 400 naming the field for %j, with no charge', async (body, field) => {
    const before = await balance();
    const entries = (await settledUsage()).length;
    const { status, body: error } = await generateJson(body);
    expect(status).toBe(400);
    expect(error.code).toBe('INVALID_REQUEST');
    expect(error.issues?.[0]?.path).toEqual([field]);
    expect(error.error).toContain(field);
    expect((await balance()).amount).toBe(before.amount);
    expect(await settledUsage()).toHaveLength(entries);
  });

  it('should answer 400 INVALID_MODEL for unknown and non-image models', async () => {
    for (const model of ['no-such-model', 'lagoon-sim-chat']) {
      const { status, body } = await generateJson({ model, prompt: 'x' });
      expect(status).toBe(400);
      expect(body.code).toBe('INVALID_MODEL');
      expect(body.error).toContain('model');
    }
  });

  it('should answer 402 without funds and charge nothing', async () => {
    const poor = await createAccountWithKey(t.app.services, { type: 'INFERENCE' });
    const response = await t.call('/api/v1/image/generate', {
      body: { model: 'lagoon-sim-image', prompt: 'x' },
      key: poor.secret,
    });
    expect(response.status).toBe(402);
  });

  it('should answer 402 past the key’s spend limit: 3 variants do not fit a 0.025 USD limit', async () => {
    const limited = await createAccountWithKey(t.app.services, {
      credit: { USD: '1' },
      keyInput: { consumptionLimit: { usd: 0.025 } },
    });
    const call = (variants: number) =>
      t.call('/api/v1/image/generate', {
        body: { model: 'lagoon-sim-image', prompt: 'x', variants },
        key: limited.secret,
      });
    const refused = await call(3);
    expect(refused.status).toBe(402);
    expect(((await refused.json()) as ErrorBody).code).toBe('API_KEY_USD_SPEND_LIMIT_EXCEEDED');
    expect((await call(2)).status).toBe(200);
  });

  it('should charge a DIEM balance the model’s DIEM price', async () => {
    const diem = await createAccountWithKey(t.app.services, { credit: { DIEM: '1' }, type: 'INFERENCE' });
    const response = await t.call('/api/v1/image/generate', {
      body: { model: 'test-tier-image', prompt: 'x', resolution: '2K' },
      key: diem.secret,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-balance-diem')).toBe('0.95');
  });

  it('should answer the x402 discovery 402 without credentials', async () => {
    const response = await t.call('/api/v1/image/generate', {
      body: { model: 'lagoon-sim-image', prompt: 'x' },
      key: null,
    });
    expect(response.status).toBe(402);
  });

  it('should keep the balance change equal to the sum of usage entries, each price × units', async () => {
    let entries: Awaited<ReturnType<typeof usage>> = [];
    await eventually(async () => {
      entries = await usage();
      const charged = entries.reduce((sum, entry) => sum - entry.amount, 0n);
      expect(10_000_000_000n - (await balance()).amount).toBe(charged);
    }, 15_000);
    expect(entries.length).toBeGreaterThan(5);
    for (const entry of entries) {
      const perUnit = BigInt(Math.round(Number(entry.price_per_unit_usd) * 1e9));
      expect(-entry.amount).toBe(perUnit * BigInt(entry.units));
    }
  });
});
