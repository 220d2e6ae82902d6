import OpenAI from 'openai';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { eventually } from '../helpers/eventually.ts';
import { createAccountWithKey } from '../helpers/services.ts';

/*
 * The built-in image simulators on a fresh install (no operator file): one model per sizing style of the
 * contract — pixel-based (the default), aspect-ratio, and aspect ratio + resolution tier priced per tier.
 */

const NANO_PER_USD = 1_000_000_000n;
const usd = (cents: number) => (BigInt(cents) * NANO_PER_USD) / 100n;

interface ModelRecord {
  id: string;
  type: string;
  model_spec: { traits: string[]; constraints?: Record<string, unknown>; pricing: Record<string, unknown> };
}
interface ErrorBody {
  error: string;
  code: string;
  issues?: { path: (string | number)[]; message: string }[];
}

describe('built-in image simulators', () => {
  let t: TestApp;
  let secret: string;
  let accountId: string;
  let client: OpenAI;

  beforeAll(async () => {
    t = await createTestApp();
    ({ secret, accountId } = await createAccountWithKey(t.app.services, { credit: { USD: '10' }, type: 'INFERENCE' }));
    client = new OpenAI({
      apiKey: secret,
      baseURL: 'http://lagoon.test/api/v1',
      maxRetries: 0,
      timeout: 60_000,
      fetch: (url, init) => t.app.fetch(new Request(url, init)),
    });
  }, 60_000);
  afterAll(async () => t.close());

  const balanceOf = async (account: string) =>
    (await t.app.services.billing.balancesOf(account)).find((entry) => entry.currency === 'USD')!.amount;
  const generate = async (body: unknown, key = secret) => {
    const response = await t.call('/api/v1/image/generate', { body, key });
    return { status: response.status, body: (await response.json()) as { images: string[] } & ErrorBody };
  };
  const sizeOf = async (base64: string) => {
    const meta = await sharp(Buffer.from(base64, 'base64')).metadata();
    return [meta.width, meta.height];
  };
  /** The usage entries of an account, once `count` are written (settlement follows the answer). */
  const entriesOf = async (account: string, count: number) => {
    const read = () =>
      t.app.database.db
        .selectFrom('usage_entries')
        .selectAll()
        .where('account_id', '=', account)
        .orderBy('created_at')
        .execute();
    let entries: Awaited<ReturnType<typeof read>> = [];
    await eventually(async () => {
      entries = await read();
      expect(entries.length).toBeGreaterThanOrEqual(count);
    }, 15_000);
    return entries;
  };

  it('should list one image model per sizing style, the pixel-based one as the default', async () => {
    const response = await t.call('/api/v1/models?type=image', { key: null });
    const models = new Map(((await response.json()) as { data: ModelRecord[] }).data.map((m) => [m.id, m]));
    const pixel = models.get('lagoon-sim-image')!.model_spec;
    expect(pixel.traits).toContain('default');
    expect(pixel.constraints).toMatchObject({ widthHeightDivisor: 8 });
    expect(pixel.constraints).not.toHaveProperty('aspectRatios');
    expect(pixel.pricing).toMatchObject({ generation: { usd: 0.01 } });
    expect(models.get('lagoon-sim-image-aspect')!.model_spec.constraints).toMatchObject({
      aspectRatios: expect.arrayContaining(['1:1', '16:9']),
      defaultAspectRatio: '1:1',
    });
    const tiers = models.get('lagoon-sim-image-tiers')!.model_spec;
    expect(tiers.constraints).toMatchObject({
      aspectRatios: expect.arrayContaining(['1:1', '16:9']),
      resolutions: ['1K', '2K', '4K'],
      defaultResolution: '1K',
    });
    expect(tiers.pricing).toEqual({
      resolutions: {
        '1K': { usd: 0.18, diem: 0.18 },
        '2K': { usd: 0.23, diem: 0.23 },
        '4K': { usd: 0.35, diem: 0.35 },
      },
      upscale: { '2x': { usd: 0.02, diem: 0.02 }, '4x': { usd: 0.08, diem: 0.08 } },
    });
    expect(tiers.pricing).not.toHaveProperty('generation');
  });

  it("should answer the contract's default request (width and height 1024) with the default model", async () => {
    const { status, body } = await generate({ model: 'default', prompt: 'a lighthouse', width: 1024, height: 1024 });
    expect(status).toBe(200);
    expect(await sizeOf(body.images[0]!)).toEqual([1024, 1024]);
    const pixels = await generate({ model: 'lagoon-sim-image', prompt: 'a kite', width: 640, height: 384 });
    expect(pixels.status).toBe(200);
    expect(await sizeOf(pixels.body.images[0]!)).toEqual([640, 384]);
    const refused = await generate({ model: 'lagoon-sim-image', prompt: 'x', aspect_ratio: '16:9' });
    expect(refused.status).toBe(400);
    expect(refused.body.issues?.[0]?.path).toEqual(['aspect_ratio']);
  });

  it('should size the aspect-ratio model by aspect_ratio and refuse width and height', async () => {
    const { status, body } = await generate({
      model: 'lagoon-sim-image-aspect',
      prompt: 'dunes',
      aspect_ratio: '9:16',
    });
    expect(status).toBe(200);
    expect(await sizeOf(body.images[0]!)).toEqual([768, 1368]);
    for (const field of ['width', 'height']) {
      const refused = await generate({ model: 'lagoon-sim-image-aspect', prompt: 'x', [field]: 1024 });
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ code: 'INVALID_REQUEST', issues: [{ path: [field] }] });
      expect(refused.body.error).toContain('aspect_ratio');
    }
  });

  it('should size the tier model by the long side of its tier and charge that tier exactly', async () => {
    const account = await createAccountWithKey(t.app.services, { credit: { USD: '1' }, type: 'INFERENCE' });
    const before = await balanceOf(account.accountId);
    const wide = await generate(
      { model: 'lagoon-sim-image-tiers', prompt: 'a bay', aspect_ratio: '16:9', resolution: '2K', format: 'png' },
      account.secret,
    );
    expect(wide.status).toBe(200);
    expect(await sizeOf(wide.body.images[0]!)).toEqual([2048, 1152]);
    const plain = await generate({ model: 'lagoon-sim-image-tiers', prompt: 'a reef' }, account.secret);
    expect(plain.status).toBe(200);
    expect(await sizeOf(plain.body.images[0]!)).toEqual([1024, 1024]);
    const entries = await entriesOf(account.accountId, 2);
    expect(entries.map((entry) => [entry.sku, entry.units, entry.amount])).toEqual([
      ['lagoon-sim-image-tiers-image-2k', '1', -usd(23)],
      ['lagoon-sim-image-tiers-image-1k', '1', -usd(18)],
    ]);
    expect(before - (await balanceOf(account.accountId))).toBe(usd(41));
  });

  it('should hold the price of the tier asked for: 4K does not fit a balance that 1K does', async () => {
    const account = await createAccountWithKey(t.app.services, { credit: { USD: '0.3' }, type: 'INFERENCE' });
    const tooDear = await generate(
      { model: 'lagoon-sim-image-tiers', prompt: 'a storm', resolution: '4K' },
      account.secret,
    );
    expect(tooDear.status).toBe(402);
    expect(await balanceOf(account.accountId)).toBe(usd(30));
    const fits = await generate(
      { model: 'lagoon-sim-image-tiers', prompt: 'a storm', resolution: '1K' },
      account.secret,
    );
    expect(fits.status).toBe(200);
    await entriesOf(account.accountId, 1);
    expect(await balanceOf(account.accountId)).toBe(usd(12));
  });

  it('should make a 4K picture 4096 pixels on its long side', async () => {
    const { status, body } = await generate({
      model: 'lagoon-sim-image-tiers',
      prompt: 'a panorama',
      aspect_ratio: '21:9',
      resolution: '4K',
      format: 'jpeg',
    });
    expect(status).toBe(200);
    expect(await sizeOf(body.images[0]!)).toEqual([4096, 1752]);
  });

  it('should answer 400 naming the allowed tiers for an unknown one, charging nothing', async () => {
    const before = await balanceOf(accountId);
    for (const resolution of ['8K', '720p']) {
      const { status, body } = await generate({ model: 'lagoon-sim-image-tiers', prompt: 'x', resolution });
      expect(status).toBe(400);
      expect(body).toMatchObject({ code: 'INVALID_REQUEST', issues: [{ path: ['resolution'] }] });
      expect(body.error).toContain('1K, 2K, 4K');
    }
    expect(await balanceOf(accountId)).toBe(before);
  });

  it('should serve /images/generations in each style through the openai client', async () => {
    const account = await createAccountWithKey(t.app.services, { credit: { USD: '1' }, type: 'INFERENCE' });
    const own = new OpenAI({
      apiKey: account.secret,
      baseURL: 'http://lagoon.test/api/v1',
      maxRetries: 0,
      timeout: 60_000,
      fetch: (url, init) => t.app.fetch(new Request(url, init)),
    });
    const plain = await own.images.generate({ prompt: 'a gull' });
    expect(await sizeOf(plain.data![0]!.b64_json!)).toEqual([1024, 1024]);
    const tall = await own.images.generate({ model: 'lagoon-sim-image', prompt: 'a mast', size: '1024x1536' });
    expect(await sizeOf(tall.data![0]!.b64_json!)).toEqual([1024, 1536]);
    const tier = await own.images.generate({ model: 'lagoon-sim-image-tiers', prompt: 'a pier', size: '1536x1024' });
    expect(await sizeOf(tier.data![0]!.b64_json!)).toEqual([1024, 680]);
    const entries = await entriesOf(account.accountId, 3);
    expect(entries.map((entry) => [entry.model_id, entry.amount])).toEqual([
      ['lagoon-sim-image', -usd(1)],
      ['lagoon-sim-image', -usd(1)],
      ['lagoon-sim-image-tiers', -usd(18)],
    ]);
    await expect(client.models.retrieve('lagoon-sim-image-tiers')).resolves.toMatchObject({ type: 'image' });
  });

  it('should take the tier through GraphQL too', async () => {
    const { data, errors } = await t.graphql<{
      generateImage: {
        __typename: string;
        message?: string;
        data?: { width: number; height: number; charged: string };
      };
    }>(
      `mutation ($input: GenerateImageInput!) {
        generateImage(input: $input) {
          __typename
          ... on MutationGenerateImageSuccess { data { width height charged } }
          ... on Error { message }
        }
      }`,
      { input: { model: 'lagoon-sim-image-tiers', prompt: 'a cove', resolution: '2K', aspectRatio: '1:1' } },
      secret,
    );
    expect(errors).toBeUndefined();
    expect(data!.generateImage).toMatchObject({ data: { width: 2048, height: 2048, charged: '0.23' } });
  });
});
