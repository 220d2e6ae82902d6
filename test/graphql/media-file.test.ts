import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaFileFor } from '../../schema/types/media.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { createAccountWithKey } from '../helpers/services.ts';

/*
 * MediaFile, the type every GraphQL media mutation returns, and mediaFileFor, the one helper they call: the URL
 * opens with no API key on this server's origin, and base64 is filled only when asked for.
 */

describe(`GraphQL MediaFile (${testDatabaseKind})`, () => {
  let t: TestApp;
  let accountId: string;
  const bytes = Buffer.from('\x89PNG not really a picture');

  beforeAll(async () => {
    t = await createTestApp();
    accountId = (await createAccountWithKey(t.app.services)).accountId;
  });
  afterAll(() => t?.close());

  it('is in the schema with its five fields', async () => {
    const result = await t.graphql<{ __type: { fields: { name: string }[] } }>(
      '{ __type(name: "MediaFile") { fields { name } } }',
    );
    expect(result.data?.__type.fields.map((field) => field.name).sort()).toEqual([
      'base64',
      'byteSize',
      'contentType',
      'expiresAt',
      'url',
    ]);
  });

  it('publishes a URL on the request’s origin that opens without a key; base64 only when asked', async () => {
    // The origin schema/yoga.ts reads from the request (Host, X-Forwarded-Proto: https), as generateImage shows below.
    const context = { services: t.app.services, origin: 'https://lagoon.test' };
    const plain = await mediaFileFor(context, accountId, { bytes, contentType: 'image/png' });
    expect(plain).toMatchObject({ contentType: 'image/png', byteSize: bytes.byteLength, base64: null });
    const url = new URL(plain.url);
    expect(url.origin).toBe('https://lagoon.test');
    expect(url.pathname).toMatch(/^\/media\/[\w-]{27}\.[\w-]{43}$/);
    expect(plain.expiresAt.getTime() - Date.now()).toBeGreaterThan(3_500_000);

    const response = await t.call(url.pathname, { key: null });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).toBe(true);

    const inline = await mediaFileFor(
      context,
      accountId,
      { bytes, contentType: 'audio/wav', ttlMs: 60_000 },
      { includeBase64: true },
    );
    expect(inline.base64).toBe(bytes.toString('base64'));
    expect(inline.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(61_000);
  });

  it('generateImage answers absolute URLs on the origin the client reached, or on LAGOON_PUBLIC_URL', async () => {
    const { secret } = await createAccountWithKey(t.app.services, { credit: { USD: '1' } });
    const query = `mutation ($input: GenerateImageInput!) {
      generateImage(input: $input) { ... on MutationGenerateImageSuccess { data { images { url contentType } } } }
    }`;
    const generate = async (app: TestApp, headers: Record<string, string>) => {
      const response = await app.call('/graphql', {
        key: secret,
        body: { query, variables: { input: { model: 'lagoon-sim-image', prompt: 'a buoy', format: 'PNG' } } },
        headers: { accept: 'application/json', ...headers },
      });
      const body = (await response.json()) as {
        data?: { generateImage: { data?: { images: { url: string; contentType: string }[] } } };
      };
      const url = body.data?.generateImage.data?.images[0]?.url;
      if (!url) throw new Error(`no image: ${JSON.stringify(body)}`);
      return url;
    };
    const url = await generate(t, { 'x-forwarded-proto': 'https' });
    expect(url).toMatch(/^https:\/\/lagoon\.test\/media\//);
    const response = await t.call(new URL(url).pathname, { key: null });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/png');

    const behindProxy = await createTestApp({ LAGOON_PUBLIC_URL: 'https://api.example.com/lagoon/' });
    try {
      const { secret: other } = await createAccountWithKey(behindProxy.app.services, { credit: { USD: '1' } });
      const answer = await behindProxy.call('/graphql', {
        key: other,
        body: { query, variables: { input: { model: 'lagoon-sim-image', prompt: 'a buoy', format: 'PNG' } } },
      });
      const body = (await answer.json()) as { data: { generateImage: { data: { images: { url: string }[] } } } };
      const proxied = body.data.generateImage.data.images[0]!.url;
      expect(proxied).toMatch(/^https:\/\/api\.example\.com\/lagoon\/media\//);
      const path = new URL(proxied).pathname.replace(/^\/lagoon/, '');
      expect((await behindProxy.call(path, { key: null })).status).toBe(200);
    } finally {
      await behindProxy.close();
    }
  });

  it('gives a path when neither LAGOON_PUBLIC_URL nor a request names the origin', async () => {
    const file = await mediaFileFor({ services: t.app.services }, accountId, { bytes, contentType: 'image/png' });
    expect(file.url).toMatch(/^\/media\//);
  });
});
