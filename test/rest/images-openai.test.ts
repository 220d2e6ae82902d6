import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stripPng } from '../../src/media/images/strip-metadata.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { eventually } from '../helpers/eventually.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { noisyPng, startImageUpstream, taggedPng, type FakeImageUpstream } from '../helpers/image-upstreams.ts';
import { createAccountWithKey } from '../helpers/services.ts';

const CENT = 10_000_000n; // 0.01 USD in nano-units
const price = (usd: number) => ({ usd, diem: usd });

describe(`REST POST /api/v1/images/generations with the openai client (${testDatabaseKind})`, () => {
  let upstream: FakeImageUpstream;
  let dir: string;
  let t: TestApp;
  let secret: string;
  let accountId: string;
  let client: OpenAI;

  const balance = async () =>
    (await t.app.services.billing.balancesOf(accountId)).find((entry) => entry.currency === 'USD')!;
  const usage = () =>
    t.app.database.db
      .selectFrom('usage_entries')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .execute();
  /** The usage entries once every settlement so far is written (their sum equals the balance change). */
  const settledUsage = async () => {
    let entries: Awaited<ReturnType<typeof usage>> = [];
    await eventually(async () => {
      entries = await usage();
      const charged = entries.reduce((sum, entry) => sum - entry.amount, 0n);
      expect(5_000_000_000n - (await balance()).amount).toBe(charged);
    }, 15_000);
    return entries;
  };
  /** The usage entries written after this call (entries of one batch can share a timestamp). */
  const newEntries = async () => {
    const ids = new Set((await usage()).map((entry) => entry.id));
    // Settlements are written after the answer (balance leases): wait for them.
    return async (count = 1) => {
      let found: Awaited<ReturnType<typeof usage>> = [];
      await eventually(async () => {
        found = (await usage()).filter((entry) => !ids.has(entry.id));
        expect(found.length).toBeGreaterThanOrEqual(count);
      }, 15_000);
      return found;
    };
  };
  const decode = async (b64: string) => sharp(Buffer.from(b64, 'base64')).metadata();

  beforeAll(async () => {
    upstream = await startImageUpstream();
    dir = await mkdtemp(join(tmpdir(), 'lagoon-images-openai-'));
    const path = join(dir, 'operator.json');
    await writeFile(
      path,
      JSON.stringify({
        providers: [
          {
            id: 'fake-openai',
            type: 'openai-compatible',
            baseUrl: `${upstream.url}/v1`,
            apiKey: 'sk-up',
            maxRetries: 0,
          },
        ],
        models: [
          {
            id: 'test-pixel-image',
            type: 'image',
            name: 'Pixel-sized test model',
            constraints: { promptCharacterLimit: 1_000, steps: { default: 10, max: 20 }, widthHeightDivisor: 16 },
            pricing: { generation: price(0.02) },
            provider: 'simulator',
          },
          {
            id: 'test-openai-image',
            type: 'image',
            name: 'OpenAI-compatible test model',
            pricing: { generation: price(0.03) },
            providers: [{ id: 'fake-openai', upstreamModel: 'stablediffusion' }],
          },
        ],
      }),
    );
    t = await createTestApp({ LAGOON_CONFIG: path });
    ({ secret, accountId } = await createAccountWithKey(t.app.services, { credit: { USD: '5' }, type: 'INFERENCE' }));
    client = new OpenAI({
      apiKey: secret,
      baseURL: 'http://lagoon.test/api/v1',
      maxRetries: 0,
      timeout: 30_000,
      fetch: (url, init) => t.app.fetch(new Request(url, init)),
    });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await Promise.all([upstream.close(), rm(dir, { recursive: true, force: true })]);
  });

  it('should answer b64_json by default for dall-e-3 (the simulator image model), charging 0.01 USD', async () => {
    const before = await balance();
    const added = await newEntries();
    const answer = await client.images.generate({ model: 'dall-e-3', prompt: 'a paper boat' });
    expect(answer.created).toBeGreaterThan(1_700_000_000);
    expect(answer.data).toHaveLength(1);
    const meta = await decode(answer.data![0]!.b64_json!);
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 1024, 1024]);
    expect(meta.exif).toBeUndefined();
    expect(before.amount - (await balance()).amount).toBe(CENT);
    expect(await added()).toMatchObject([{ model_id: 'lagoon-sim-image', units: '1', amount: -CENT }]);
  });

  it('should answer a data URL for response_format url, in the output format asked for', async () => {
    const added = await newEntries();
    const answer = await client.images.generate({
      model: 'test-pixel-image',
      prompt: 'a kite',
      response_format: 'url',
      output_format: 'jpeg',
      size: '1024x1536',
    });
    const url = answer.data![0]!.url!;
    expect(url.startsWith('data:image/jpeg;base64,')).toBe(true);
    const meta = await decode(url.slice(url.indexOf(',') + 1));
    expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 1024, 1536]);
    // Settled after the answer: wait, so the next test's snapshot of the usage entries includes it.
    await added();
  });

  it('should map size to the nearest aspect ratio of an aspect-ratio model', async () => {
    const added = await newEntries();
    const answer = await client.images.generate({
      model: 'lagoon-sim-image-aspect',
      prompt: 'wide',
      size: '1792x1024',
    });
    const meta = await decode(answer.data![0]!.b64_json!);
    expect([meta.width, meta.height]).toEqual([1368, 768]);
    await added();
  });

  it('should serve an unknown model name with the default image model', async () => {
    const added = await newEntries();
    await client.images.generate({ model: 'gpt-image-1', prompt: 'anything' });
    expect(await added()).toMatchObject([{ model_id: 'lagoon-sim-image' }]);
  });

  it('should blur adult content unless moderation is low', async () => {
    const prompt = 'portrait [simulate:adult]';
    const auto = await client.images.generate({ prompt }).withResponse();
    expect(auto.response.headers.get('x-is-blurred')).toBe('true');
    const low = await client.images.generate({ prompt, moderation: 'low' }).withResponse();
    expect(low.response.headers.get('x-is-blurred')).toBeNull();
  });

  it('should accept the compatibility-only fields', async () => {
    const answer = await client.images.generate({
      prompt: 'compat',
      background: 'auto',
      output_compression: 80,
      quality: 'high',
      style: 'vivid',
      user: 'someone',
      n: 1,
    });
    expect(answer.data).toHaveLength(1);
  });

  it.each([
    [{ prompt: '' }, 'prompt'],
    [{ prompt: 'x'.repeat(1_501) }, 'prompt'],
    [{ prompt: 'x', n: 2 }, 'n'],
    [{ prompt: 'x', size: '100x100' }, 'size'],
    [{ prompt: 'x', response_format: 'jpeg' }, 'response_format'],
    [{ prompt: 'x', output_format: 'gif' }, 'output_format'],
    [{ prompt: 'x', moderation: 'none' }, 'moderation'],
    [{ prompt: 'x', output_compression: 101 }, 'output_compression'],
  ])('should answer 400 naming the field for %j, with no charge', async (body, field) => {
    const before = await balance();
    const error = await client.images
      .generate(body as unknown as OpenAI.Images.ImageGenerateParamsNonStreaming)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const apiError = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(apiError.status).toBe(400);
    expect(JSON.stringify(apiError.error)).toContain(field);
    expect((await balance()).amount).toBe(before.amount);
  });

  it('should call an OpenAI-compatible upstream with the standard fields and its key', async () => {
    upstream.requests.length = 0;
    const added = await newEntries();
    const answer = await client.images.generate({ model: 'test-openai-image', prompt: 'a mill', size: '512x512' });
    const meta = await decode(answer.data![0]!.b64_json!);
    expect([meta.width, meta.height]).toEqual([512, 512]);
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.requests[0]).toMatchObject({
      method: 'POST',
      path: '/v1/images/generations',
      body: { model: 'stablediffusion', prompt: 'a mill', n: 1, size: '512x512', response_format: 'b64_json' },
    });
    expect(upstream.requests[0]!.headers.authorization).toBe('Bearer sk-up');
    expect(await added()).toMatchObject([{ model_id: 'test-openai-image', amount: -3n * CENT }]);
  });

  it("should pass the upstream's PNG through unmarked, without its metadata, as b64_json and as a data URL", async () => {
    const sent = Buffer.from(await taggedPng(512, 512), 'base64');
    const expected = stripPng(sent)!;
    upstream.queue({ kind: 'tagged' });
    const b64 = await client.images.generate({ model: 'test-openai-image', prompt: 'a mill', size: '512x512' });
    const bytes = Buffer.from(b64.data![0]!.b64_json!, 'base64');
    expect(bytes.equals(expected)).toBe(true);
    const meta = await sharp(bytes).metadata();
    expect([meta.format, meta.exif, meta.xmp]).toEqual(['png', undefined, undefined]);
    upstream.queue({ kind: 'tagged' });
    const url = await client.images.generate({
      model: 'test-openai-image',
      prompt: 'a mill',
      size: '512x512',
      response_format: 'url',
    });
    expect(url.data![0]!.url).toBe(`data:image/png;base64,${expected.toString('base64')}`);
  });

  it("should answer a large upstream picture's own base64, byte for byte", async () => {
    const sent = await noisyPng(512, 512);
    expect(sent.length).toBeGreaterThan(128 * 1024);
    upstream.queue({ kind: 'noisy' }, { kind: 'noisy' });
    const answer = await client.images.generate({ model: 'test-openai-image', prompt: 'static', size: '512x512' });
    expect(answer.data![0]!.b64_json).toBe(sent);
    const url = await client.images.generate({
      model: 'test-openai-image',
      prompt: 'static',
      size: '512x512',
      response_format: 'url',
    });
    expect(url.data![0]!.url).toBe(`data:image/png;base64,${sent}`);
  });

  it('should answer an upstream 500 with a 5xx error and charge nothing', async () => {
    const before = await balance();
    const entries = (await settledUsage()).length;
    upstream.queue({ kind: 'status', status: 500 });
    const error = await client.images
      .generate({ model: 'test-openai-image', prompt: 'fails' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((await balance()).amount).toBe(before.amount);
    expect(await settledUsage()).toHaveLength(entries);
  });

  it('should keep the balance change equal to the sum of usage entries', async () => {
    await eventually(async () => {
      const charged = (await usage()).reduce((sum, entry) => sum - entry.amount, 0n);
      expect(5_000_000_000n - (await balance()).amount).toBe(charged);
    }, 15_000);
  });
});
