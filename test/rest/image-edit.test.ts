import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE, createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { failWith, hang, startImageUpstream, type FakeImageUpstream } from '../helpers/image-edit-upstreams.ts';
import { eventually } from '../helpers/eventually.ts';
import { createAccountWithKey } from '../helpers/services.ts';
import { fundedAccount } from '../helpers/uploads.ts';

const TIMEOUT = 60_000;

/** A picture with some structure (a gradient), so resizes and overlays change real pixels. */
const picture = (width: number, height: number, format: 'png' | 'jpeg' = 'png') =>
  sharp({ create: { width, height, channels: 3, background: { r: 200, g: 60, b: 30 } } })
    .composite([
      {
        input: Buffer.from(
          `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><circle cx="${width / 2}" cy="${height / 2}" r="${Math.min(width, height) / 3}" fill="#2a6"/></svg>`,
        ),
      },
    ])
    .toFormat(format)
    .toBuffer();

interface ErrorBody {
  error: string;
  code: string;
  issues?: { path: (string | number)[]; message: string }[];
}

describe(`REST image edit and multi-edit (${testDatabaseKind})`, () => {
  let t: TestApp;
  let upstream: FakeImageUpstream;
  let dir: string;
  let account: Awaited<ReturnType<typeof fundedAccount>>;
  let square: Buffer;

  const post = (path: string, body: unknown, key = account.secret) => t.call(`/api/v1${path}`, { body, key });
  /** The usage entries of one request, once written (usage entries are written in batches, after the answer). */
  const entriesOf = async (response: Response, expected = 1) => {
    const requestId = response.headers.get('x-request-id');
    let entries: Awaited<ReturnType<typeof account.usage>> = [];
    await eventually(async () => {
      entries = (await account.usage()).filter((entry) => entry.request_id === requestId);
      expect(entries).toHaveLength(expected);
    });
    return entries.sort((a, b) => a.sku.localeCompare(b.sku));
  };
  const errorOf = async (response: Response) => ({
    status: response.status,
    body: (await response.json()) as ErrorBody,
  });

  beforeAll(async () => {
    upstream = await startImageUpstream();
    dir = await mkdtemp(join(tmpdir(), 'lagoon-image-edit-'));
    const config = join(dir, 'operator.yaml');
    await writeFile(
      config,
      [
        'providers:',
        // Room for a busy machine to render an answer; only `oai-brief` is there to time out.
        `  - { id: oai, type: openai-compatible, baseUrl: "${upstream.url}/v1", timeoutMs: 30000, maxRetries: 0 }`,
        `  - { id: oai-brief, type: openai-compatible, baseUrl: "${upstream.url}/v1", timeoutMs: 1500, maxRetries: 0 }`,
        // Waits a minute for an answer: only the caller's hang-up ends a call to it within a test.
        `  - { id: oai-patient, type: openai-compatible, baseUrl: "${upstream.url}/v1", timeoutMs: 60000, maxRetries: 0 }`,
        `  - { id: sd, type: automatic1111, baseUrl: "${upstream.url}", timeoutMs: 30000, maxRetries: 0 }`,
        'models:',
        '  - id: oai-edit',
        '    type: inpaint',
        '    name: OpenAI-compatible edit',
        '    provider: oai',
        '    upstreamModel: gpt-image-1',
        '    constraints: { promptCharacterLimit: 1000, aspectRatios: [auto, "1:1", "16:9"], combineImages: true }',
        '    pricing: { inpaint: { usd: 0.05 } }',
        '  - id: oai-brief-edit',
        '    type: inpaint',
        '    name: Brief OpenAI-compatible edit',
        '    provider: oai-brief',
        '    pricing: { inpaint: { usd: 0.05 } }',
        '  - id: oai-patient-edit',
        '    type: inpaint',
        '    name: Patient OpenAI-compatible edit',
        '    provider: oai-patient',
        '    pricing: { inpaint: { usd: 0.05 } }',
        '  - id: sd-edit',
        '    type: inpaint',
        '    name: A1111 edit',
        '    provider: sd',
        '    upstreamModel: sdxl.safetensors',
        '    constraints: { promptCharacterLimit: 2000, combineImages: true, maxInputImages: 2 }',
        '    pricing: { inpaint: { usd: 0.03 }, resolutions: { 2K: { usd: 0.06 } } }',
      ].join('\n'),
    );
    t = await createTestApp({ LAGOON_CONFIG: config });
    account = await fundedAccount(t, '5');
    square = await picture(512, 512);
  }, TIMEOUT);
  afterAll(async () => {
    await t?.close();
    await upstream?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'should edit a base64 picture with the default simulator model: a PNG at 1K, charged 0.04 USD',
    async () => {
      const before = (await account.balance()).amount;
      const response = await post('/image/edit', { image: square.toString('base64'), prompt: 'make it blue' });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('image/png');
      expect(response.headers.get('content-encoding')).toBeNull();
      const meta = await sharp(Buffer.from(await response.arrayBuffer())).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['png', 1024, 1024]);
      expect(meta.exif).toBeUndefined();
      const [last] = await entriesOf(response);
      expect(last!.model_id).toBe('lagoon-sim-edit');
      expect(-BigInt(last!.amount)).toBe(40_000_000n);
      expect(before - (await account.balance()).amount).toBe(40_000_000n);
      expect(response.headers.get('x-balance-usd')).toBe('4.96');
    },
    TIMEOUT,
  );

  it(
    'should size by aspect ratio and tier, JPEG by default at 2K, and honour output_format',
    async () => {
      const wide = await post('/image/edit', {
        image: `data:image/png;base64,${square.toString('base64')}`,
        prompt: 'wide',
        aspect_ratio: '16:9',
        resolution: '2K',
      });
      expect(wide.status).toBe(200);
      const meta = await sharp(Buffer.from(await wide.arrayBuffer())).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 2048, 1152]);
      const webp = await post('/image/edit', { image: square.toString('base64'), prompt: 'x', output_format: 'webp' });
      expect(webp.headers.get('content-type')).toBe('image/webp');
      const jpg = await post('/image/edit', { image: square.toString('base64'), prompt: 'x', output_format: 'jpg' });
      expect((await sharp(Buffer.from(await jpg.arrayBuffer())).metadata()).format).toBe('jpeg');
      // auto infers the ratio from the input: 1024 long side, 3:4 → 768 × 1024.
      const tall = await post('/image/edit', { image: (await picture(384, 512)).toString('base64'), prompt: 'tall' });
      const tallMeta = await sharp(Buffer.from(await tall.arrayBuffer())).metadata();
      expect([tallMeta.width, tallMeta.height]).toEqual([768, 1024]);
    },
    TIMEOUT,
  );

  it(
    'should accept a multipart file upload',
    async () => {
      const form = new FormData();
      form.set('image', new Blob([new Uint8Array(square)], { type: 'image/png' }), 'in.png');
      form.set('prompt', 'paint it');
      form.set('safe_mode', 'false');
      const response = await t.app.fetch(
        new Request(`${BASE}/api/v1/image/edit`, {
          method: 'POST',
          headers: { authorization: `Bearer ${account.secret}` },
          body: form,
        }),
      );
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('image/png');
    },
    TIMEOUT,
  );

  it(
    'should blur an adult picture in safe mode and say so, and not when safe_mode is false',
    async () => {
      const blurred = await post('/image/edit', { image: square.toString('base64'), prompt: 'x [simulate:adult]' });
      expect(blurred.status).toBe(200);
      expect(blurred.headers.get('x-is-blurred')).toBe('true');
      const clear = await post('/image/edit', {
        image: square.toString('base64'),
        prompt: 'x [simulate:adult]',
        safe_mode: false,
      });
      expect(clear.headers.get('x-is-blurred')).toBeNull();
    },
    TIMEOUT,
  );

  it(
    'should serve the official openai client images.edit (b64_json), falling back to the default edit model',
    async () => {
      const client = new OpenAI({
        apiKey: account.secret,
        baseURL: `${BASE}/api/v1`,
        fetch: (input, init) => t.app.fetch(new Request(input, init)),
      });
      const { data: result, response } = await client.images
        .edit({ model: 'gpt-image-1', image: await toFile(square, 'in.png', { type: 'image/png' }), prompt: 'a hat' })
        .withResponse();
      const b64 = result.data?.[0]?.b64_json;
      expect(b64).toBeTruthy();
      const meta = await sharp(Buffer.from(b64!, 'base64')).metadata();
      expect([meta.format, meta.width]).toEqual(['png', 1024]);
      expect((await entriesOf(response))[0]!.model_id).toBe('lagoon-sim-edit');
      // Through Lagoon to the fake OpenAI-compatible upstream, with a data URL answer.
      upstream.requests.length = 0;
      const viaUpstream = await client.images.edit({
        model: 'oai-edit',
        image: await toFile(square, 'in.png', { type: 'image/png' }),
        prompt: 'a scarf',
        response_format: 'url',
      });
      expect(viaUpstream.data?.[0]?.url).toMatch(/^data:image\/png;base64,/);
      expect(upstream.requests[0]).toMatchObject({ path: '/v1/images/edits', body: { model: 'gpt-image-1' } });
    },
    TIMEOUT,
  );

  it(
    'should send edits to an OpenAI-compatible upstream as multipart /v1/images/edits',
    async () => {
      upstream.requests.length = 0;
      const response = await post('/image/edit', {
        image: square.toString('base64'),
        prompt: 'oai',
        model: 'oai-edit',
      });
      expect(response.status).toBe(200);
      const sent = upstream.requests[0]!;
      expect(sent.path).toBe('/v1/images/edits');
      expect(sent.body).toMatchObject({
        model: 'gpt-image-1',
        prompt: 'oai',
        size: '1024x1024',
        response_format: 'b64_json',
      });
      expect(sent.body.imageBytes).toBe(square.byteLength);
      expect(-BigInt((await entriesOf(response))[0]!.amount)).toBe(50_000_000n);
    },
    TIMEOUT,
  );

  it(
    'should send multi-edits to A1111 img2img with the second picture as the mask, priced by tier',
    async () => {
      upstream.requests.length = 0;
      const mask = await picture(512, 512);
      const response = await post('/image/multi-edit', {
        images: [square.toString('base64'), mask.toString('base64')],
        prompt: 'sd',
        modelId: 'sd-edit',
        resolution: '2K',
      });
      expect(response.status).toBe(200);
      const meta = await sharp(Buffer.from(await response.arrayBuffer())).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 2048, 2048]);
      const sent = upstream.requests[0]!;
      expect(sent.path).toBe('/sdapi/v1/img2img');
      expect(sent.body).toMatchObject({ prompt: 'sd', width: 2048, height: 2048 });
      expect(sent.body.override_settings).toEqual({ sd_model_checkpoint: 'sdxl.safetensors' });
      expect(typeof sent.body.mask).toBe('string');
      expect(-BigInt((await entriesOf(response))[0]!.amount)).toBe(60_000_000n);
    },
    TIMEOUT,
  );

  it(
    'should charge the extra input images of a multi-edit: 0.04 + 2 × 0.01 USD',
    async () => {
      const before = (await account.balance()).amount;
      const images = [square, await picture(300, 300), await picture(256, 256)].map((b) => b.toString('base64'));
      const response = await post('/image/multi-edit', { images, prompt: 'combine' });
      expect(response.status).toBe(200);
      const entries = await entriesOf(response, 2);
      expect(entries.map((entry) => [entry.sku, entry.units, -BigInt(entry.amount)])).toEqual([
        ['lagoon-sim-edit-inpaint', '1', 40_000_000n],
        ['lagoon-sim-edit-inpaint-input-image', '2', 20_000_000n],
      ]);
      expect(entries.every((entry) => entry.unit_type === 'images' && entry.model_type === 'INPAINT')).toBe(true);
      expect(before - (await account.balance()).amount).toBe(60_000_000n);
    },
    TIMEOUT,
  );

  it(
    'should answer 5xx and charge nothing when the upstream fails or times out',
    async () => {
      const before = (await account.balance()).amount;
      upstream.queue(failWith(500));
      const failed = await errorOf(
        await post('/image/edit', { image: square.toString('base64'), prompt: 'x', model: 'oai-edit' }),
      );
      expect(failed.status).toBeGreaterThanOrEqual(500);
      expect(failed.body.code).toBe('UPSTREAM_ERROR');
      upstream.queue(hang());
      const slow = await errorOf(
        await post('/image/edit', { image: square.toString('base64'), prompt: 'x', model: 'oai-brief-edit' }),
      );
      expect(slow.status).toBe(504);
      expect(slow.body.code).toBe('REQUEST_TIMEOUT');
      const balance = await account.balance();
      expect([balance.amount, balance.reserved]).toEqual([before, 0n]);
    },
    TIMEOUT,
  );

  it(
    'should take a multi-edit as multipart images file parts',
    async () => {
      const upload = async (count: number) => {
        const form = new FormData();
        for (let i = 0; i < count; i += 1)
          form.append('images', new Blob([new Uint8Array(square)], { type: 'image/png' }), `in${i}.png`);
        form.set('prompt', 'layers');
        form.set('output_format', 'webp');
        return t.app.fetch(
          new Request(`${BASE}/api/v1/image/multi-edit`, {
            method: 'POST',
            headers: { authorization: `Bearer ${account.secret}` },
            body: form,
          }),
        );
      };
      const two = await upload(2);
      expect(two.status).toBe(200);
      expect(two.headers.get('content-type')).toBe('image/webp');
      const entries = await entriesOf(two, 2);
      expect(entries.reduce((sum, entry) => sum - BigInt(entry.amount), 0n)).toBe(50_000_000n);
      const four = await errorOf(await upload(4));
      expect([four.status, four.body.issues?.[0]?.path[0]]).toEqual([400, 'images']);
    },
    TIMEOUT,
  );

  it(
    'should decode large JSON multi-edit pictures from the body, base64 or data URLs, with the same checks',
    async () => {
      // Noise compresses poorly: each picture's base64 is long enough to be lifted out of the body unparsed.
      const noise = await sharp(randomBytes(256 * 256 * 3), { raw: { width: 256, height: 256, channels: 3 } })
        .png()
        .toBuffer();
      const base64 = noise.toString('base64');
      expect(base64.length).toBeGreaterThan(64 * 1024);
      const response = await post('/image/multi-edit', {
        images: [base64, `data:image/png;base64,${base64}`],
        prompt: 'layers',
      });
      expect(response.status).toBe(200);
      const entries = await entriesOf(response, 2);
      expect(entries.reduce((sum, entry) => sum - BigInt(entry.amount), 0n)).toBe(50_000_000n);
      // A long text that is not base64 is refused as before, and named.
      const bad = await errorOf(
        await post('/image/multi-edit', { images: [base64, `${'A'.repeat(70_000)}!`], prompt: 'x' }),
      );
      expect([bad.status, bad.body.issues?.[0]?.path]).toEqual([400, ['images', 1]]);
      const notPicture = await errorOf(
        await post('/image/multi-edit', { images: [base64, 'QUFB'.repeat(20_000)], prompt: 'x' }),
      );
      expect([notPicture.status, notPicture.body.issues?.[0]?.path]).toEqual([400, ['images', 1]]);
    },
    TIMEOUT,
  );

  it(
    'should not charge a caller that hangs up before its picture is ready',
    async () => {
      const before = await account.balance();
      upstream.requests.length = 0;
      upstream.queue(hang());
      const controller = new AbortController();
      const pending = t.app
        .fetch(
          new Request(`${BASE}/api/v1/image/edit`, {
            method: 'POST',
            headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
            body: JSON.stringify({ image: square.toString('base64'), prompt: 'x', model: 'oai-patient-edit' }),
            signal: controller.signal,
          }),
        )
        .catch(() => undefined);
      await eventually(async () => expect(upstream.requests).toHaveLength(1));
      controller.abort();
      void pending;
      await eventually(async () => {
        const after = await account.balance();
        expect([after.amount, after.reserved]).toEqual([before.amount, 0n]);
      });
    },
    TIMEOUT,
  );

  it(
    'should show edits in the usage export and analytics as images',
    async () => {
      const owner = await createAccountWithKey(t.app.services, { credit: { USD: '1' }, type: 'INFERENCE' });
      const response = await post('/image/edit', { image: square.toString('base64'), prompt: 'x' }, owner.secret);
      expect(response.status).toBe(200);
      const day = new Date().toISOString().slice(0, 10);
      type Export = {
        data: { sku: string; units: number; amount: number; inferenceDetails: { requestId: string } | null }[];
      };
      let usage: Export = { data: [] };
      await eventually(async () => {
        usage = (await (await t.call('/api/v1/billing/usage', { key: owner.adminSecret })).json()) as Export;
        expect(usage.data).toHaveLength(1);
      });
      expect(usage.data[0]).toMatchObject({ sku: 'lagoon-sim-edit-inpaint', units: 1, amount: -0.04 });
      expect(usage.data[0]!.inferenceDetails?.requestId).toBe(response.headers.get('x-request-id'));
      const analytics = (await (
        await t.call(`/api/v1/billing/usage-analytics?startDate=${day}&endDate=${day}`, { key: owner.adminSecret })
      ).json()) as { byModel: { modelName: string; modelType: string | null; unitType: string }[] };
      expect(analytics.byModel.find((m) => m.modelName === 'lagoon-sim-edit')).toMatchObject({
        modelType: 'IMAGE',
        unitType: 'images',
      });
    },
    TIMEOUT,
  );

  it(
    'should refuse each bad field with a 400 naming it',
    async () => {
      const image = square.toString('base64');
      const cases: [unknown, string | number][] = [
        [{ image, prompt: '' }, 'prompt'],
        [{ image, prompt: 'x'.repeat(32_769) }, 'prompt'],
        [{ image, prompt: 'x'.repeat(1001), model: 'oai-edit' }, 'prompt'],
        [{ image, prompt: 'x', aspect_ratio: '5:4' }, 'aspect_ratio'],
        [{ image, prompt: 'x', aspect_ratio: '21:9' }, 'aspect_ratio'],
        [{ image, prompt: 'x', resolution: '8K' }, 'resolution'],
        [{ image, prompt: 'x', resolution: '12345678901' }, 'resolution'],
        [{ image, prompt: 'x', output_format: 'gif' }, 'output_format'],
        [{ image, prompt: 'x', safe_mode: 'yes' }, 'safe_mode'],
        [{ image, prompt: 'x', model: 'lagoon-sim-edit', modelId: 'oai-edit' }, 'modelId'],
        [{ prompt: 'x' }, 'image'],
        [{ image: 'not base64!', prompt: 'x' }, 'image'],
        [{ image: Buffer.from('plain text').toString('base64'), prompt: 'x' }, 'image'],
        [{ image: (await picture(200, 200)).toString('base64'), prompt: 'x' }, 'image'],
        [{ image: 'ftp://example.com/a.png', prompt: 'x' }, 'image'],
      ];
      for (const [body, field] of cases) {
        const { status, body: error } = await errorOf(await post('/image/edit', body));
        expect({ field, status, code: error.code }).toEqual({ field, status: 400, code: 'INVALID_REQUEST' });
        expect(error.issues?.[0]?.path[0]).toBe(field);
      }
      const unknown = await errorOf(await post('/image/edit', { image, prompt: 'x', model: 'nope' }));
      expect([unknown.status, unknown.body.code]).toEqual([400, 'INVALID_MODEL']);
      expect(unknown.body.error).toContain('model');
      const multi: [unknown, string | number][] = [
        [{ images: [], prompt: 'x' }, 'images'],
        [{ images: [image, image, image, image], prompt: 'x' }, 'images'],
        [{ images: [image, image, image], prompt: 'x', modelId: 'sd-edit' }, 'images'],
      ];
      for (const [body, field] of multi) {
        const { status, body: error } = await errorOf(await post('/image/multi-edit', body));
        expect({ field, status }).toEqual({ field, status: 400 });
        expect(error.issues?.[0]?.path[0]).toBe(field);
      }
      const second = await errorOf(await post('/image/multi-edit', { images: [image, 'AAAA'], prompt: 'x' }));
      expect(second.body.issues?.[0]?.path).toEqual(['images', 1]);
    },
    TIMEOUT,
  );

  it(
    'should refuse a picture over 33,177,600 pixels (400) and one of 25 MB or more (413)',
    async () => {
      const huge = await sharp({ create: { width: 6000, height: 6000, channels: 3, background: '#000' } })
        .png()
        .toBuffer();
      const tooMany = await errorOf(await post('/image/edit', { image: huge.toString('base64'), prompt: 'x' }));
      expect([tooMany.status, tooMany.body.issues?.[0]?.path[0]]).toEqual([400, 'image']);
      const big = Buffer.alloc(26_000_000, 7);
      const form = new FormData();
      form.set('image', new Blob([new Uint8Array(big)]), 'big.png');
      form.set('prompt', 'x');
      const upload = await t.app.fetch(
        new Request(`${BASE}/api/v1/image/edit`, {
          method: 'POST',
          headers: { authorization: `Bearer ${account.secret}` },
          body: form,
        }),
      );
      expect([upload.status, ((await upload.json()) as ErrorBody).code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
      const asJson = await errorOf(await post('/image/edit', { image: big.toString('base64'), prompt: 'x' }));
      expect([asJson.status, asJson.body.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    },
    TIMEOUT,
  );

  it(
    'should refuse image URLs on loopback and private addresses without fetching them',
    async () => {
      upstream.requests.length = 0;
      for (const url of [
        `${upstream.url}/a.png`,
        'http://10.0.0.1/a.png',
        'http://[::1]/a.png',
        'http://169.254.169.254/latest',
      ]) {
        const { status, body } = await errorOf(await post('/image/edit', { image: url, prompt: 'x' }));
        expect({ url, status }).toEqual({ url, status: 400 });
        expect(body.issues?.[0]?.path).toEqual(['image']);
        expect(body.error).toMatch(/not a public address/);
      }
      expect(upstream.requests).toHaveLength(0);
    },
    TIMEOUT,
  );

  it(
    'should refuse without credentials and without funds',
    async () => {
      const anonymous = await post('/image/edit', { image: square.toString('base64'), prompt: 'x' }, '');
      expect(anonymous.status).toBe(402); // x402 discovery: a wallet may pay
      const poor = await fundedAccount(t, '0');
      const broke = await errorOf(
        await post('/image/edit', { image: square.toString('base64'), prompt: 'x' }, poor.secret),
      );
      expect([broke.status, broke.body.code]).toEqual([402, 'INSUFFICIENT_BALANCE']);
    },
    TIMEOUT,
  );
});
