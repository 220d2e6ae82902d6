import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mediaFileFor } from '../../schema/types/media.ts';
import { BASE, createTestApp, type TestApp } from '../helpers/app.ts';
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
    const request = new Request(`${BASE}/graphql`, { method: 'POST', headers: { 'x-forwarded-proto': 'https' } });
    const context = { services: t.app.services, request };
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

  it('gives a path when neither LAGOON_PUBLIC_URL nor a request names the origin', async () => {
    const file = await mediaFileFor({ services: t.app.services }, accountId, { bytes, contentType: 'image/png' });
    expect(file.url).toMatch(/^\/media\//);
  });
});
