import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { eventually } from '../helpers/eventually.ts';
import { failWith, startImageUpstream, type FakeImageUpstream } from '../helpers/image-edit-upstreams.ts';
import { fundedAccount } from '../helpers/uploads.ts';

const TIMEOUT = 120_000;

const picture = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 90, g: 30, b: 160 } } })
    .composite([
      {
        input: Buffer.from(
          `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect x="${width / 4}" y="${height / 4}" width="${width / 2}" height="${height / 2}" fill="#fc3"/></svg>`,
        ),
      },
    ])
    .png()
    .toBuffer();

interface ErrorBody {
  error: string;
  code: string;
  issues?: { path: (string | number)[]; message: string }[];
}

describe(`REST image upscale (${testDatabaseKind})`, () => {
  let t: TestApp;
  let upstream: FakeImageUpstream;
  let dir: string;
  let account: Awaited<ReturnType<typeof fundedAccount>>;
  let small: Buffer;

  const post = (path: string, body: unknown, key = account.secret) => t.call(`/api/v1${path}`, { body, key });
  const errorOf = async (response: Response) => ({
    status: response.status,
    body: (await response.json()) as ErrorBody,
  });
  const decoded = async (response: Response) => sharp(Buffer.from(await response.arrayBuffer())).metadata();
  /** What one request was charged, once its usage entries are written (they are written in batches). */
  const chargedFor = async (response: Response) => {
    const requestId = response.headers.get('x-request-id');
    let total = 0n;
    await eventually(async () => {
      const entries = (await account.usage()).filter((entry) => entry.request_id === requestId);
      expect(entries.length).toBeGreaterThan(0);
      total = entries.reduce((sum, entry) => sum - BigInt(entry.amount), 0n);
    });
    return total;
  };

  beforeAll(async () => {
    upstream = await startImageUpstream();
    dir = await mkdtemp(join(tmpdir(), 'lagoon-image-upscale-'));
    const config = join(dir, 'operator.yaml');
    await writeFile(
      config,
      [
        'providers:',
        `  - { id: sd, type: automatic1111, baseUrl: "${upstream.url}", timeoutMs: 30000, maxRetries: 0, options: { upscaler: "R-ESRGAN 4x+" } }`,
        'models:',
        '  - id: sd-upscaler',
        '    type: upscale',
        '    name: A1111 upscaler',
        '    provider: sd',
        '    pricing: { upscale: { 2x: { usd: 0.03 }, 4x: { usd: 0.05 } } }',
      ].join('\n'),
    );
    t = await createTestApp({ LAGOON_CONFIG: config });
    account = await fundedAccount(t, '5');
    small = await picture(512, 384);
  }, TIMEOUT);
  afterAll(async () => {
    await t?.close();
    await upstream?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'should upscale 2× by default with the built-in resampler: a PNG, charged the 2x price',
    async () => {
      const before = (await account.balance()).amount;
      const response = await post('/image/upscale', { image: small.toString('base64') });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('image/png');
      const meta = await decoded(response);
      expect([meta.format, meta.width, meta.height]).toEqual(['png', 1024, 768]);
      expect(await chargedFor(response)).toBe(20_000_000n);
      expect(before - (await account.balance()).amount).toBe(20_000_000n);
      const entry = (await account.usage()).find((e) => e.request_id === response.headers.get('x-request-id'))!;
      expect([entry.model_id, entry.model_type, entry.unit_type, entry.sku]).toEqual([
        'lagoon-sim-upscaler',
        'UPSCALE',
        'images',
        'lagoon-sim-upscaler-upscale-2x',
      ]);
    },
    TIMEOUT,
  );

  it(
    'should upscale 4× at the 4x price, and reduce a 4× that would pass 16,777,216 pixels',
    async () => {
      const four = await post('/image/upscale', { image: small.toString('base64'), scale: 4 });
      expect(four.status).toBe(200);
      const meta = await decoded(four);
      expect([meta.width, meta.height]).toEqual([2048, 1536]);
      expect(await chargedFor(four)).toBe(80_000_000n);
      const large = await picture(2048, 2048);
      const reduced = await post('/image/upscale', { image: large.toString('base64'), scale: 4 });
      expect(reduced.status).toBe(200);
      const big = await decoded(reduced);
      expect([big.width, big.height]).toEqual([4096, 4096]);
      expect(big.width! * big.height!).toBeLessThanOrEqual(16_777_216);
      // The effective scale was 2: the 2x price.
      expect(await chargedFor(reduced)).toBe(20_000_000n);
    },
    TIMEOUT,
  );

  it(
    'should answer /images/upscale in the OpenAI images shape: a data: URL by default, base64 on request',
    async () => {
      // veniceai-cli's `upscale` posts here and downloads data[0].url.
      const byUrl = await post('/images/upscale', { model: 'lagoon-sim-upscaler', image: small.toString('base64') });
      expect(byUrl.status).toBe(200);
      expect(byUrl.headers.get('content-type')).toMatch(/^application\/json/);
      const answer = (await byUrl.json()) as { created: number; data: { url?: string; b64_json?: string }[] };
      expect(answer.created).toBeGreaterThan(1_700_000_000);
      expect(answer.data).toHaveLength(1);
      const fetched = await fetch(answer.data[0]!.url!);
      expect(fetched.headers.get('content-type')).toBe('image/png');
      const meta = await sharp(Buffer.from(await fetched.arrayBuffer())).metadata();
      expect([meta.width, meta.height]).toEqual([1024, 768]);
      expect(await chargedFor(byUrl)).toBe(20_000_000n);

      const byBase64 = await post('/images/upscale', { image: small.toString('base64'), response_format: 'b64_json' });
      const base64 = (await byBase64.json()) as { data: { url?: string; b64_json?: string }[] };
      expect(base64.data[0]!.url).toBeUndefined();
      expect((await sharp(Buffer.from(base64.data[0]!.b64_json!, 'base64')).metadata()).width).toBe(1024);

      const before = (await account.balance()).amount;
      const bad = await errorOf(
        await post('/images/upscale', { image: small.toString('base64'), response_format: 'png' }),
      );
      expect(bad.status).toBe(400);
      expect(bad.body.issues?.[0]?.path).toEqual(['response_format']);
      expect((await account.balance()).amount).toBe(before);
    },
    TIMEOUT,
  );

  it(
    'should take a multipart upload with form fields, and clamp creativity',
    async () => {
      const form = new FormData();
      form.set('image', new Blob([new Uint8Array(small)], { type: 'image/png' }), 'in.png');
      form.set('scale', '3');
      form.set('creativity', '0.5');
      const response = await t.app.fetch(
        new Request(`${BASE}/api/v1/image/upscale`, {
          method: 'POST',
          headers: { authorization: `Bearer ${account.secret}` },
          body: form,
        }),
      );
      expect(response.status).toBe(200);
      const meta = await decoded(response);
      expect([meta.width, meta.height]).toEqual([1536, 1152]);
      expect(await chargedFor(response)).toBe(80_000_000n);
    },
    TIMEOUT,
  );

  it(
    'should call A1111 extra-single-image with the configured upscaler, and charge nothing when it fails',
    async () => {
      upstream.requests.length = 0;
      const response = await post('/image/upscale', {
        image: small.toString('base64'),
        model: 'sd-upscaler',
        creativity: null,
      });
      expect(response.status).toBe(200);
      expect(upstream.requests[0]).toMatchObject({
        path: '/sdapi/v1/extra-single-image',
        body: { upscaling_resize: 2, upscaler_1: 'R-ESRGAN 4x+' },
      });
      expect(await chargedFor(response)).toBe(30_000_000n);
      const before = await account.balance();
      upstream.queue(failWith(502));
      const failed = await errorOf(
        await post('/image/upscale', { image: small.toString('base64'), model: 'sd-upscaler' }),
      );
      expect(failed.status).toBeGreaterThanOrEqual(500);
      const after = await account.balance();
      expect([after.amount, after.reserved]).toEqual([before.amount, 0n]);
    },
    TIMEOUT,
  );

  it(
    'should refuse each bad field with a 400 naming it',
    async () => {
      const image = small.toString('base64');
      const cases: [unknown, string][] = [
        [{}, 'image'],
        [{ image, scale: 1 }, 'scale'],
        [{ image, scale: 5 }, 'scale'],
        [{ image, scale: 'two' }, 'scale'],
        [{ image, creativity: 'lots' }, 'creativity'],
        [{ image: (await picture(200, 200)).toString('base64') }, 'image'],
        [{ image: 'http://127.0.0.1:1/x.png' }, 'image'],
      ];
      for (const [body, field] of cases) {
        const { status, body: error } = await errorOf(await post('/image/upscale', body));
        expect({ field, status }).toEqual({ field, status: 400 });
        expect(error.issues?.[0]?.path[0]).toBe(field);
      }
      const unknown = await errorOf(await post('/image/upscale', { image, model: 'lagoon-sim-edit' }));
      expect([unknown.status, unknown.body.code]).toEqual([400, 'INVALID_MODEL']);
    },
    TIMEOUT,
  );

  it(
    'should refuse an input of 25 MB or more with 413',
    async () => {
      const form = new FormData();
      form.set('image', new Blob([new Uint8Array(Buffer.alloc(26_000_000, 1))]), 'big.png');
      const response = await t.app.fetch(
        new Request(`${BASE}/api/v1/image/upscale`, {
          method: 'POST',
          headers: { authorization: `Bearer ${account.secret}` },
          body: form,
        }),
      );
      expect([response.status, ((await response.json()) as ErrorBody).code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    },
    TIMEOUT,
  );
});
