import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { createAccountWithKey } from '../helpers/services.ts';

const GENERATE = `mutation Generate($input: GenerateImageInput!, $includeBase64: Boolean) {
  generateImage(input: $input, includeBase64: $includeBase64) {
    __typename
    ... on MutationGenerateImageSuccess {
      data {
        id model seed simulated blurred charged currency request width height
        images { contentType url expiresAt byteSize base64 }
        timing { inferenceDuration total }
      }
    }
    ... on Error { message code }
    ... on ValidationError { issues { path message } }
  }
}`;

interface GeneratePayload {
  generateImage: {
    __typename: string;
    data?: {
      id: string;
      model: string;
      seed: number;
      simulated: boolean;
      blurred: boolean;
      charged: string;
      currency: string;
      request: Record<string, unknown>;
      width: number;
      height: number;
      images: { contentType: string; url: string; expiresAt: string; byteSize: number; base64: string | null }[];
      timing: { inferenceDuration: number; total: number };
    };
    message?: string;
    code?: string;
    issues?: { path: string[]; message: string }[];
  };
}

describe(`GraphQL generateImage and imageStyles (${testDatabaseKind})`, () => {
  let t: TestApp;
  let secret: string;
  let accountId: string;
  const usd = async () =>
    (await t.app.services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD')!.amount;
  const generate = (input: Record<string, unknown>, key: string | null = secret, includeBase64 = false) =>
    t.graphql<GeneratePayload>(GENERATE, { input, includeBase64 }, key);

  beforeAll(async () => {
    t = await createTestApp();
    ({ secret, accountId } = await createAccountWithKey(t.app.services, { credit: { USD: '1' }, type: 'INFERENCE' }));
  });
  afterAll(async () => {
    await t.close();
  });

  it('should generate pictures as signed media URLs with the seed, charging per picture', async () => {
    const before = await usd();
    const { data, errors } = await generate({
      model: 'lagoon-sim-image-aspect',
      prompt: 'a harbour at night',
      format: 'PNG',
      aspectRatio: '16:9',
      variants: 2,
      seed: 12,
      embedExifMetadata: true,
    });
    expect(errors).toBeUndefined();
    const result = data!.generateImage.data!;
    expect(result).toMatchObject({ model: 'lagoon-sim-image-aspect', seed: 12, simulated: true, blurred: false });
    expect(result).toMatchObject({ charged: '0.02', currency: 'USD', width: 1368, height: 768 });
    expect(result.request).toMatchObject({ aspect_ratio: '16:9', variants: 2, seed: 12 });
    expect(result.images).toHaveLength(2);
    expect(result.images[0]).toMatchObject({ contentType: 'image/png', base64: null });
    const url = new URL(result.images[0]!.url, 'http://lagoon.test');
    const response = await t.call(url.pathname, { key: null });
    expect(response.status).toBe(200);
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(bytes.byteLength).toBe(result.images[0]!.byteSize);
    const meta = await sharp(bytes).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 1368, 768]);
    expect(meta.exif).toBeDefined();
    expect(before - (await usd())).toBe(20_000_000n);
  });

  it('should also return base64 when asked', async () => {
    const { data } = await generate({ model: 'lagoon-sim-image', prompt: 'inline', format: 'JPEG' }, secret, true);
    const image = data!.generateImage.data!.images[0]!;
    expect(image.contentType).toBe('image/jpeg');
    const meta = await sharp(Buffer.from(image.base64!, 'base64')).metadata();
    expect([meta.format, meta.width]).toEqual(['jpeg', 1024]);
  });

  it('should return a typed ValidationError naming the field, charging nothing', async () => {
    const before = await usd();
    const { data } = await generate({ model: 'lagoon-sim-image-aspect', prompt: 'x', width: 512 });
    expect(data!.generateImage).toMatchObject({ __typename: 'ValidationError', code: 'INVALID_REQUEST' });
    expect(data!.generateImage.issues?.[0]?.path).toEqual(['width']);
    expect(await usd()).toBe(before);
  });

  it('should return InvalidModelError for an unknown model', async () => {
    const { data } = await generate({ model: 'nope', prompt: 'x' });
    expect(data!.generateImage).toMatchObject({ __typename: 'InvalidModelError', code: 'INVALID_MODEL' });
  });

  it('should refuse an anonymous caller', async () => {
    const { data, errors } = await generate({ model: 'lagoon-sim-image', prompt: 'x' }, null);
    expect(data?.generateImage ?? null).toBeNull();
    expect(errors?.length).toBeGreaterThan(0);
  });

  it('should list the default model’s styles publicly', async () => {
    const { data } = await t.graphql<{ imageStyles: { data?: string[] } }>(
      '{ imageStyles { ... on QueryImageStylesSuccess { data } } }',
      {},
      null,
    );
    expect(data!.imageStyles.data).toContain('Cinematic');
  });
});
