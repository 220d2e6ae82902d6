import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { fundedAccount } from '../helpers/uploads.ts';

const TIMEOUT = 60_000;

const EDIT = `mutation Edit($input: EditImageInput!) {
  editImage(input: $input, includeBase64: true) {
    __typename
    ... on MutationEditImageSuccess { data { file { url contentType byteSize base64 } width height blurred model charged currency } }
    ... on ValidationError { message issues { path message } }
    ... on Error { message code }
  }
}`;
const UPSCALE = `mutation Upscale($input: UpscaleImageInput!) {
  upscaleImage(input: $input) {
    __typename
    ... on MutationUpscaleImageSuccess { data { file { url contentType base64 } width height charged } }
    ... on Error { message code }
  }
}`;

interface ImageData {
  file: { url: string; contentType: string; byteSize?: number; base64: string | null };
  width: number;
  height: number;
  blurred?: boolean;
  model?: string;
  charged: string;
  currency?: string;
}
type Result = {
  __typename: string;
  data?: ImageData;
  message?: string;
  code?: string;
  issues?: { path: string[]; message: string }[];
};

describe(`GraphQL editImage and upscaleImage (${testDatabaseKind})`, () => {
  let t: TestApp;
  let account: Awaited<ReturnType<typeof fundedAccount>>;
  let square: string;

  beforeAll(async () => {
    t = await createTestApp();
    account = await fundedAccount(t, '2');
    square = (
      await sharp({ create: { width: 400, height: 300, channels: 3, background: '#369' } })
        .png()
        .toBuffer()
    ).toString('base64');
  }, TIMEOUT);
  afterAll(async () => t.close());

  const edit = async (input: Record<string, unknown>) =>
    (await t.graphql<{ editImage: Result }>(EDIT, { input }, account.secret)).data!.editImage;

  it(
    'should edit one picture and combine several, charging as the REST routes do',
    async () => {
      const one = await edit({ images: [square], prompt: 'sunset', outputFormat: 'WEBP', aspectRatio: 'R16_9' });
      expect(one.__typename).toBe('MutationEditImageSuccess');
      expect(one.data).toMatchObject({
        file: { contentType: 'image/webp' },
        width: 1024,
        height: 576,
        blurred: false,
        model: 'lagoon-sim-edit',
        charged: '0.04',
        currency: 'USD',
      });
      const meta = await sharp(Buffer.from(one.data!.file.base64!, 'base64')).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['webp', 1024, 576]);
      // The signed URL serves the same picture without an API key.
      const fetched = await t.app.fetch(new Request(one.data!.file.url));
      expect(fetched.status).toBe(200);
      expect(fetched.headers.get('content-type')).toBe('image/webp');
      expect((await fetched.arrayBuffer()).byteLength).toBe(one.data!.file.byteSize);
      const two = await edit({ images: [square, square], prompt: 'merge' });
      expect(two.data).toMatchObject({ file: { contentType: 'image/png' }, width: 1024, height: 768, charged: '0.05' });
    },
    TIMEOUT,
  );

  it(
    'should answer typed errors naming the field',
    async () => {
      const empty = await edit({ images: [square], prompt: '' });
      expect(empty.__typename).toBe('ValidationError');
      expect(empty.issues?.[0]?.path).toEqual(['prompt']);
      const local = await edit({ images: ['http://127.0.0.1/x.png'], prompt: 'x' });
      expect(local.__typename).toBe('ValidationError');
      expect(local.issues?.[0]?.path).toEqual(['image']);
      const model = await edit({ images: [square], prompt: 'x', model: 'lagoon-sim-chat' });
      expect([model.__typename, model.code]).toEqual(['InvalidModelError', 'INVALID_MODEL']);
    },
    TIMEOUT,
  );

  it(
    'should upscale',
    async () => {
      const result = (
        await t.graphql<{ upscaleImage: Result }>(UPSCALE, { input: { image: square, scale: 2 } }, account.secret)
      ).data!.upscaleImage;
      expect(result.data).toMatchObject({ file: { contentType: 'image/png', base64: null }, width: 800, height: 600 });
      expect(result.data!.charged).toBe('0.02');
      const bad = (
        await t.graphql<{ upscaleImage: Result }>(UPSCALE, { input: { image: square, scale: 9 } }, account.secret)
      ).data!.upscaleImage;
      expect([bad.__typename, bad.code]).toEqual(['ValidationError', 'INVALID_REQUEST']);
    },
    TIMEOUT,
  );
});
