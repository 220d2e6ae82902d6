import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';

interface KeyRecord {
  id: string;
  last6Chars: string;
  apiKeyType: string;
  description: string;
  consumptionLimits: { usd: number | null; diem: number | null; vcu: number | null };
  limitPeriod: string;
  lastUsedAt: string | null;
  usage: { trailingSevenDays: { usd: string; vcu: string; diem: string } };
  currentPeriodUsage: { usd: string; diem: string };
}

describe(`REST /api/v1/api_keys (${testDatabaseKind})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  async function createKey(body: Record<string, unknown>, key = ADMIN_KEY) {
    const response = await t.call('/api/v1/api_keys', { body, key });
    return {
      status: response.status,
      body: (await response.json()) as {
        success: boolean;
        data: { id: string; apiKey: string } & Record<string, unknown>;
      },
    };
  }

  it('should answer 401 with the error body when no key is sent', async () => {
    const response = await t.call('/api/v1/api_keys', { key: null });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: expect.any(String), code: 'AUTHENTICATION_FAILED' });
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f]{32}$/);
  });

  it('should answer 401 for an unknown key and for a malformed header', async () => {
    expect((await t.call('/api/v1/api_keys', { key: 'nope' })).status).toBe(401);
    const malformed = await t.call('/api/v1/api_keys', { key: null, headers: { authorization: 'Basic abc' } });
    expect(malformed.status).toBe(401);
    expect(await malformed.json()).toMatchObject({ code: 'AUTHENTICATION_FAILED' });
  });

  it('should list the bootstrap ADMIN key with last6Chars and usage fields', async () => {
    const response = await t.call('/api/v1/api_keys');
    expect(response.status).toBe(200);
    const body = (await response.json()) as { object: string; data: KeyRecord[] };
    expect(body.object).toBe('list');
    expect(body.data[0]).toMatchObject({
      apiKeyType: 'ADMIN',
      last6Chars: ADMIN_KEY.slice(-6),
      consumptionLimits: { usd: null, diem: null, vcu: null },
      usage: { trailingSevenDays: { usd: '0', vcu: '0', diem: '0' } },
      currentPeriodUsage: { usd: '0', diem: '0' },
    });
    expect(JSON.stringify(body)).not.toContain(ADMIN_KEY);
  });

  it('should run the lifecycle of an INFERENCE key: shown once, works, is no admin, stops after DELETE', async () => {
    const created = await createKey({
      apiKeyType: 'INFERENCE',
      description: 'ci key',
      consumptionLimit: { usd: 12.5 },
      limitPeriod: 'MONTH',
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      success: true,
      data: {
        apiKeyType: 'INFERENCE',
        description: 'ci key',
        consumptionLimit: { usd: 12.5, diem: null, vcu: null },
        limitPeriod: 'MONTH',
        modelPrivacy: 'ALL',
        expiresAt: null,
      },
    });
    const secret = created.body.data.apiKey;

    const me = await t.graphql<{ account: { id: string } }>('{ account { id } }', {}, secret);
    expect(me.errors).toBeUndefined();
    expect(me.data?.account.id).toBeTruthy();

    const list = (await (await t.call('/api/v1/api_keys')).json()) as { data: KeyRecord[] };
    const entry = list.data.find((k) => k.id === created.body.data.id);
    expect(entry).toMatchObject({ last6Chars: secret.slice(-6), consumptionLimits: { usd: 12.5 } });
    expect(entry?.lastUsedAt).not.toBeNull();
    expect(JSON.stringify(list)).not.toContain(secret);

    const asInference = await t.call('/api/v1/api_keys', { key: secret });
    expect(asInference.status).toBe(401);
    expect(await asInference.json()).toEqual({ error: 'Admin API key required', code: 'ADMIN_KEY_REQUIRED' });

    const deleted = await t.call(`/api/v1/api_keys?id=${created.body.data.id}`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ success: true });
    const after = await t.graphql('{ account { id } }', {}, secret);
    expect(after.errors?.[0]?.extensions?.code).toBe('AUTHENTICATION_FAILED');
    expect((await t.call(`/api/v1/api_keys/${created.body.data.id}`)).status).toBe(404);
  });

  it('should get one key and update it with PATCH', async () => {
    const { body } = await createKey({ apiKeyType: 'INFERENCE', description: 'to edit', expiresAt: '2099-01-31' });
    expect(body.data.expiresAt).toBe('2099-01-31T00:00:00.000Z');
    const patched = await t.call('/api/v1/api_keys', {
      method: 'PATCH',
      body: {
        id: body.data.id,
        description: 'edited',
        consumptionLimit: { diem: '3.25' },
        modelPrivacy: 'PRIVATE_ONLY',
        expiresAt: '',
      },
    });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({
      success: true,
      data: {
        id: body.data.id,
        description: 'edited',
        consumptionLimits: { diem: 3.25, usd: null },
        modelPrivacy: 'PRIVATE_ONLY',
        expiresAt: null,
      },
    });
    const got = await t.call(`/api/v1/api_keys/${body.data.id}`);
    expect(await got.json()).toMatchObject({
      data: { description: 'edited', currentPeriodUsage: { usd: '0', diem: '0' } },
    });
  });

  it('should reject bad input with 400 and the field named', async () => {
    const long = await createKey({ apiKeyType: 'INFERENCE', description: 'x'.repeat(65) });
    expect(long.status).toBe(400);
    expect(long.body).toMatchObject({
      code: 'INVALID_REQUEST',
      issues: [{ path: ['description'] }],
      details: { description: { _errors: [expect.any(String)] } },
    });
    expect((await createKey({ apiKeyType: 'SUPER', description: 'x' })).status).toBe(400);
    expect((await createKey({ description: 'missing type' })).status).toBe(400);
    expect((await createKey({ apiKeyType: 'INFERENCE', description: 'past', expiresAt: '2001-01-01' })).status).toBe(
      400,
    );
    expect(
      (await createKey({ apiKeyType: 'INFERENCE', description: 'neg', consumptionLimit: { usd: -1 } })).status,
    ).toBe(400);
    expect((await createKey({ apiKeyType: 'INFERENCE', description: 'extra', bogus: true })).status).toBe(400);
    const malformed = await t.call('/api/v1/api_keys', { body: '{"apiKeyType": ' });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual({ error: 'Request body is not valid JSON', code: 'INVALID_REQUEST' });
    const wrongType = await t.call('/api/v1/api_keys', {
      body: '{}',
      headers: { 'content-type': 'multipart/form-data; boundary=x' },
    });
    expect(wrongType.status).toBe(415);
    expect(await wrongType.json()).toMatchObject({ code: 'INVALID_CONTENT_TYPE' });
    const badDelete = await t.call('/api/v1/api_keys?id=00000000-0000-4000-8000-000000000000', { method: 'DELETE' });
    expect(badDelete.status).toBe(400);
    expect((await t.call('/api/v1/api_keys?id=not-a-uuid', { method: 'DELETE' })).status).toBe(400);
    expect((await t.call('/api/v1/api_keys/not-a-uuid')).status).toBe(400);
  });

  it('should refuse a body over 1 MB with 413 without reading it all', async () => {
    const huge = JSON.stringify({ apiKeyType: 'INFERENCE', description: 'x', pad: 'a'.repeat(1_100_000) });
    const response = await t.call('/api/v1/api_keys', { body: huge });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    // A streamed body with no Content-Length is refused as soon as it passes the limit; what follows is read and
    // dropped only up to a bound (so a keep-alive client can read the answer), never the whole 64 MB.
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        if (pulled > 1000) controller.close();
        else controller.enqueue(new Uint8Array(64 * 1024).fill(32));
      },
    });
    const streamed = await t.app.fetch(
      new Request('http://lagoon.test/api/v1/api_keys', {
        method: 'POST',
        body: stream,
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
        duplex: 'half',
      } as RequestInit),
    );
    expect(streamed.status).toBe(413);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(pulled).toBeLessThan(200);
  });

  it('should keep accounts apart: another account cannot read or delete these keys', async () => {
    const { adminKey } = await t.app.services.accounts.create({ kind: 'operator', requestId: 't' }, { name: 'other' });
    const mine = (await createKey({ apiKeyType: 'INFERENCE', description: 'private' })).body.data.id;
    expect((await t.call(`/api/v1/api_keys/${mine}`, { key: adminKey.secret })).status).toBe(404);
    expect((await t.call(`/api/v1/api_keys?id=${mine}`, { method: 'DELETE', key: adminKey.secret })).status).toBe(400);
    expect(
      (
        await t.call('/api/v1/api_keys', {
          method: 'PATCH',
          body: { id: mine, description: 'hijack' },
          key: adminKey.secret,
        })
      ).status,
    ).toBe(404);
    const theirs = (await (await t.call('/api/v1/api_keys', { key: adminKey.secret })).json()) as { data: KeyRecord[] };
    expect(theirs.data.map((k) => k.id)).not.toContain(mine);
    expect((await t.call(`/api/v1/api_keys/${mine}`)).status).toBe(200);
  });

  it('should refuse an expired key', async () => {
    const expiresAt = Date.now() + 1000;
    const { body } = await createKey({
      apiKeyType: 'INFERENCE',
      description: 'short lived',
      expiresAt: new Date(expiresAt).toISOString(),
    });
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - Date.now()) + 50));
    const expired = await t.graphql('{ account { id } }', {}, body.data.apiKey);
    expect(expired.errors?.[0]).toMatchObject({
      message: 'API key has expired',
      extensions: { code: 'AUTHENTICATION_FAILED' },
    });
  });
});

describe('REST front door', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ CORS_ORIGINS: 'https://dash.example' });
  });
  afterAll(async () => t.close());

  it('should answer unknown routes with 404 in the error shape, and echo a valid request id', async () => {
    const response = await t.call('/api/v1/nope', { headers: { 'x-request-id': 'ABCDEF0123456789abcdef0123456789' } });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 'Route not found: GET /api/v1/nope', code: 'NOT_FOUND' });
    expect(response.headers.get('x-request-id')).toBe('abcdef0123456789abcdef0123456789');
    const replaced = await t.call('/nowhere', { headers: { 'x-request-id': 'not valid' } });
    expect(replaced.status).toBe(404);
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f]{32}$/);
  });

  it('should answer 405 for a known path with the wrong method', async () => {
    const response = await t.call('/api/v1/api_keys', { method: 'PUT' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toContain('GET');
  });

  it('should serve health, readiness and Prometheus metrics by route template', async () => {
    expect(await (await t.call('/healthz')).json()).toEqual({ status: 'ok' });
    expect((await t.call('/readyz')).status).toBe(200);
    await t.call('/api/v1/api_keys');
    const metrics = await (await t.call('/metrics')).text();
    expect(metrics).toMatch(/lagoon_http_requests_total\{method="GET",route="\/api\/v1\/api_keys",status="200"\} \d+/);
    expect(metrics).toContain('lagoon_http_request_duration_seconds_bucket');
  });

  it('should allow configured CORS origins only', async () => {
    const preflight = await t.call('/api/v1/api_keys', {
      method: 'OPTIONS',
      key: null,
      headers: {
        origin: 'https://dash.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://dash.example');
    expect(preflight.headers.get('access-control-allow-headers')).toBe('authorization');
    const other = await t.call('/api/v1/api_keys', {
      method: 'OPTIONS',
      key: null,
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
    });
    expect(other.status).toBe(403);
    const simple = await t.call('/graphql', {
      body: { query: '{ __typename }' },
      headers: { origin: 'https://dash.example' },
    });
    expect(simple.headers.get('access-control-allow-origin')).toBe('https://dash.example');
  });

  it('should publish an OpenAPI 3.1 document built from the request schemas', async () => {
    const doc = (await (await t.call('/api/v1/openapi.json', { key: null })).json()) as {
      openapi: string;
      paths: Record<
        string,
        Record<
          string,
          {
            requestBody?: {
              content: Record<string, { schema: { properties: Record<string, unknown>; required: string[] } }>;
            };
          }
        >
      >;
    };
    expect(doc.openapi).toBe('3.1.0');
    const create = doc.paths['/api/v1/api_keys']?.post?.requestBody?.content['application/json']?.schema;
    expect(create?.required).toEqual(expect.arrayContaining(['apiKeyType', 'description']));
    expect(create?.properties).toHaveProperty('consumptionLimit');
    expect(doc.paths['/api/v1/api_keys/{id}']).toHaveProperty('get');
  });
});
