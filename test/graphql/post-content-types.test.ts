import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY } from '../helpers/app.ts';
import { startChatServer, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { eventually } from '../helpers/eventually.ts';
import { fundedAccount } from '../helpers/uploads.ts';

const CREATE_KEY =
  'mutation { createApiKey(input: { apiKeyType: ADMIN, description: "csrf" }) { __typename ... on MutationCreateApiKeySuccess { data { secret } } } }';

/**
 * A mutation may not arrive as a form post or any body a browser sends cross-site without a CORS preflight
 * (issue 33 item 10: `createApiKey` ran from `application/x-www-form-urlencoded`). JSON and multipart uploads work.
 */
describe(`GraphQL POST content types (${testDatabaseKind})`, () => {
  let server: ChatServer;

  beforeAll(async () => {
    server = await startChatServer();
  });
  afterAll(async () => server?.close());

  const post = (body: BodyInit, headers: Record<string, string>) =>
    fetch(`${server.url}/graphql`, { method: 'POST', headers, body });
  const keyCount = async () => {
    const response = await post(JSON.stringify({ query: '{ apiKeys { id } }' }), {
      authorization: `Bearer ${ADMIN_KEY}`,
      'content-type': 'application/json',
    });
    return ((await response.json()) as { data: { apiKeys: unknown[] } }).data.apiKeys.length;
  };

  it('should refuse a form post, a text/plain and an application/graphql POST with 415, creating nothing', async () => {
    const before = await keyCount();
    const refusals: [BodyInit, Record<string, string>][] = [
      [new URLSearchParams({ query: CREATE_KEY }), { authorization: `Bearer ${ADMIN_KEY}` }],
      [new URLSearchParams({ query: CREATE_KEY }), {}],
      [JSON.stringify({ query: CREATE_KEY }), { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'text/plain' }],
      [CREATE_KEY, { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/graphql' }],
      [JSON.stringify({ query: CREATE_KEY }), { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': '' }],
    ];
    for (const [body, headers] of refusals) {
      const response = await post(body, headers);
      expect(response.status, JSON.stringify(headers)).toBe(415);
      expect(await response.json()).toMatchObject({ errors: [{ extensions: { code: 'INVALID_CONTENT_TYPE' } }] });
    }
    expect(await keyCount()).toBe(before);
  });

  it('should run a mutation sent as JSON (application/json or application/graphql+json)', async () => {
    const before = await keyCount();
    for (const type of ['application/json; charset=utf-8', 'application/graphql+json']) {
      const response = await post(JSON.stringify({ query: CREATE_KEY }), {
        authorization: `Bearer ${ADMIN_KEY}`,
        'content-type': type,
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ data: { createApiKey: { data: { secret: expect.any(String) } } } });
    }
    expect(await keyCount()).toBe(before + 2);
  });

  it('should take a multipart upload (parseDocument) with a key, and charge it', async () => {
    const account = await fundedAccount(server.t, '1');
    const form = new FormData();
    const query =
      'mutation($file: File!) { parseDocument(file: $file) { ... on MutationParseDocumentSuccess { data { text } } } }';
    form.append('operations', JSON.stringify({ query, variables: { file: null } }));
    form.append('map', JSON.stringify({ 0: ['variables.file'] }));
    form.append('0', new Blob(['tide pools at dawn']), 'notes.txt');
    const response = await post(form, { authorization: `Bearer ${account.secret}` });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { parseDocument: { data: { text: 'tide pools at dawn' } } } });
    // The charge is written just after the answer (balance leases).
    await eventually(async () => expect(await account.usage()).toHaveLength(1));
  });
});
