import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const JSON_ACCEPT = 'application/graphql-response+json, application/json';

describe(`GraphiQL from the install's own files (${testDatabaseKind})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('should name only same-origin files, each answered with its content type', async () => {
    const page = await t.call('/graphql', { key: null, headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).not.toMatch(/https?:\/\//);
    const referenced = [...html.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    // The stylesheet, the icon and the script, plus Monaco's three workers named in the inline script.
    const workers = ['editorWorkerService', 'json', 'graphql'].map((label) => `/graphql/graphiql/${label}.worker.js`);
    expect(referenced).toHaveLength(3);
    const expectedTypes: Record<string, RegExp> = { css: /^text\/css/, js: /^text\/javascript/, ico: /^image\// };
    for (const path of [...referenced, ...workers]) {
      expect(path.startsWith('/'), path).toBe(true);
      const asset = await t.call(path, { key: null });
      expect(asset.status, path).toBe(200);
      expect(asset.headers.get('content-type'), path).toMatch(expectedTypes[path.split('.').pop()!]!);
      expect((await asset.arrayBuffer()).byteLength, path).toBeGreaterThan(0);
    }
    expect(html).toContain('YogaGraphiQL.renderYogaGraphiQL');
    expect(html).toContain('getWorkerUrl');
  });

  it('should answer 404 for another name under its path', async () => {
    expect((await t.call('/graphql/graphiql/nothing.js', { key: null })).status).toBe(404);
  });
});

describe(`Automatic persisted queries (${testDatabaseKind})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ GRAPHQL_MAX_DEPTH: '2' });
  });
  afterAll(async () => t.close());

  const extensions = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });
  const post = async (body: Record<string, unknown>) => {
    const response = await t.call('/graphql', { body, headers: { accept: JSON_ACCEPT } });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const get = async (params: Record<string, string>) => {
    const response = await t.call(`/graphql?${new URLSearchParams(params)}`, { headers: { accept: JSON_ACCEPT } });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const notFound = {
    errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }],
  };

  it('should answer a hash alone once its document was sent with it, over POST', async () => {
    const query = 'query PostApq { account { id } }';
    const hash = sha256(query);
    expect((await post({ extensions: extensions(hash) })).body).toMatchObject(notFound);
    const stored = await post({ query, extensions: extensions(hash) });
    expect(stored.body.errors).toBeUndefined();
    const answered = await post({ extensions: extensions(hash) });
    expect(answered.status).toBe(200);
    expect(answered.body).toEqual(stored.body);
    expect((answered.body.data as { account: { id: string } }).account.id).toBeTruthy();
  });

  it('should do the same over GET', async () => {
    const query = 'query GetApq { account { name } }';
    const hash = sha256(query);
    const ext = JSON.stringify(extensions(hash));
    expect((await get({ extensions: ext })).body).toMatchObject(notFound);
    expect((await get({ query, extensions: ext })).body.errors).toBeUndefined();
    const answered = await get({ extensions: ext });
    expect(answered.status).toBe(200);
    expect(answered.body.data).toHaveProperty('account.name');
  });

  it('should refuse by GET a stored subscription, as one sent by GET', async () => {
    const query = 'subscription GetSubscription { usageUpdated { amount } }';
    const hash = sha256(query);
    await t.call('/graphql', { body: { query, extensions: extensions(hash) }, headers: { accept: JSON_ACCEPT } });
    const params = new URLSearchParams({ extensions: JSON.stringify(extensions(hash)) });
    const response = await t.call(`/graphql?${params}`, { headers: { accept: 'text/event-stream' } });
    expect(response.status).toBe(405);
    expect(await response.text()).toContain('Can only perform a subscription operation from a POST request.');
  });

  it('should refuse a document whose hash does not match', async () => {
    const { body } = await post({ query: '{ account { id } }', extensions: extensions(sha256('something else')) });
    expect(body).toMatchObject({ errors: [{ extensions: { code: 'PERSISTED_QUERY_MISMATCH' } }] });
  });

  it('should still apply the document limits to a stored document', async () => {
    const query = '{ account { balances { currency } } }';
    const hash = sha256(query);
    const first = await post({ query, extensions: extensions(hash) });
    expect((first.body.errors as { message: string }[])[0]!.message).toMatch(/depth/i);
    const again = await post({ extensions: extensions(hash) });
    expect((again.body.errors as { message: string }[])[0]!.message).toMatch(/depth/i);
    expect(again.body.data).toBeUndefined();
  });
});
