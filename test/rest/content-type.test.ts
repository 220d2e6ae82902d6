import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatServer, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { startJsonRpcStub } from '../helpers/json-rpc-stub.ts';
import { startSearxng, type FakeUpstream } from '../helpers/search-upstreams.ts';
import { createAccountWithKey } from '../helpers/services.ts';

/*
 * Every JSON route runs only a body declared as application/json (a charset may follow). A body sent as text/plain,
 * as a form or with no Content-Type at all (what a cross-site form or a bare fetch sends, without a CORS preflight)
 * gets 415 INVALID_CONTENT_TYPE and nothing runs: no charge, no key created. Over HTTP through the listener
 * `npm start` serves with, so chat and the RPC proxy are answered on Node's own objects as in production.
 */

const REFUSED_TYPES: (string | undefined)[] = [
  'text/plain',
  'text/plain;charset=UTF-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/jsonx',
  'application/vnd.api+json',
  undefined,
];
const ACCEPTED_TYPES = ['application/json', 'application/json; charset=utf-8', 'Application/JSON;charset=UTF-8'];

describe(`REST JSON routes need Content-Type: application/json (${testDatabaseKind})`, () => {
  let server: ChatServer;
  let searxng: FakeUpstream;
  let node: Awaited<ReturnType<typeof startJsonRpcStub>>;
  let admin: Awaited<ReturnType<typeof createAccountWithKey>>;
  let keyId: string;

  beforeAll(async () => {
    [searxng, node] = await Promise.all([startSearxng(), startJsonRpcStub()]);
    server = await startChatServer({ SEARXNG_URL: searxng.url, RPC_UPSTREAM_ETHEREUM_SEPOLIA: node.url });
    admin = await createAccountWithKey(server.t.app.services, { credit: { USD: '10' } });
    keyId = (await server.t.app.services.apiKeys.create(admin.auth, { apiKeyType: 'INFERENCE', description: 'target' }))
      .key.id;
  });
  afterAll(async () => {
    await server?.close();
    await Promise.all([searxng?.close(), node?.close()]);
  });

  const routes = () => [
    {
      method: 'POST',
      path: '/api/v1/chat/completions',
      body: { model: 'lagoon-sim-chat', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 8 },
    },
    { method: 'POST', path: '/api/v1/augment/search', body: { query: 'otters', limit: 2 } },
    {
      method: 'POST',
      path: '/api/v1/crypto/rpc/ethereum-sepolia',
      body: { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] },
    },
    { method: 'POST', path: '/api/v1/api_keys', body: { apiKeyType: 'INFERENCE', description: 'made by a form' } },
    { method: 'PATCH', path: '/api/v1/api_keys', body: { id: keyId, description: 'changed by a form' } },
  ];

  /** A raw body (bytes, so fetch adds no Content-Type of its own) with exactly the given type, or none. */
  const send = (route: { method: string; path: string; body: unknown }, type: string | undefined) =>
    fetch(`${server.url}${route.path}`, {
      method: route.method,
      headers: { authorization: `Bearer ${admin.secret}`, ...(type !== undefined && { 'content-type': type }) },
      body: Buffer.from(JSON.stringify(route.body)),
    });
  const state = async () => ({
    balance: (await server.t.app.services.billing.balancesOf(admin.accountId)).find((b) => b.currency === 'USD')
      ?.amount,
    entries: (
      await server.t.app.database.db
        .selectFrom('usage_entries')
        .select('id')
        .where('account_id', '=', admin.accountId)
        .execute()
    ).length,
    keys: (await server.t.app.services.apiKeys.list(admin.auth)).map((key) => `${key.id} ${key.description}`).sort(),
    upstream: { search: searxng.requests.length, rpc: node.requests() },
  });

  it('should answer 415 INVALID_CONTENT_TYPE for text/plain, a form, another JSON-like type or no type, and change nothing', async () => {
    const before = await state();
    for (const route of routes()) {
      for (const type of REFUSED_TYPES) {
        const response = await send(route, type);
        const body = (await response.json()) as { error: string; code: string };
        expect({ route: route.path, type, status: response.status, code: body.code }).toEqual({
          route: route.path,
          type,
          status: 415,
          code: 'INVALID_CONTENT_TYPE',
        });
        expect(body.error).toMatch(/application\/json/);
      }
    }
    await server.t.app.services.cryptoRpc.flush();
    expect(await state()).toEqual(before);
  });

  it('should refuse the same way through the in-process fetch handler', async () => {
    for (const route of routes()) {
      for (const type of ['text/plain', undefined]) {
        const response = await server.t.app.fetch(
          new Request(`http://lagoon.test${route.path}`, {
            method: route.method,
            headers: { authorization: `Bearer ${admin.secret}`, ...(type && { 'content-type': type }) },
            body: new TextEncoder().encode(JSON.stringify(route.body)),
          }),
        );
        expect([route.path, response.status]).toEqual([route.path, 415]);
      }
    }
  });

  it('should run application/json with or without a charset', async () => {
    for (const route of routes()) {
      for (const type of ACCEPTED_TYPES) {
        const response = await send(route, type);
        expect([route.path, type, response.status]).toEqual([route.path, type, 200]);
        await response.arrayBuffer();
      }
    }
  });
});
