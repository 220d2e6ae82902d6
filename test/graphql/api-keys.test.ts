import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';

const KEY_FIELDS =
  'id apiKeyType description last6Chars limitPeriod modelPrivacy consumptionLimits { usd diem } createdAt expiresAt';

describe(`GraphQL API keys and account (${testDatabaseKind})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('should return the same key data as REST', async () => {
    const rest = (await (await t.call('/api/v1/api_keys')).json()) as { data: Record<string, unknown>[] };
    const gql = await t.graphql<{ apiKeys: Record<string, unknown>[] }>(`{ apiKeys { ${KEY_FIELDS} } }`);
    expect(gql.errors).toBeUndefined();
    expect(gql.data?.apiKeys).toEqual(
      rest.data.map((k) => ({
        id: k.id,
        apiKeyType: k.apiKeyType,
        description: k.description,
        last6Chars: k.last6Chars,
        limitPeriod: k.limitPeriod,
        modelPrivacy: k.modelPrivacy,
        consumptionLimits: { usd: null, diem: null },
        createdAt: k.createdAt,
        expiresAt: k.expiresAt,
      })),
    );
  });

  it('should create, read, update and delete a key through mutations with typed results', async () => {
    const created = await t.graphql<{
      createApiKey: {
        __typename: string;
        data: { secret: string; apiKey: { id: string; consumptionLimits: { usd: string } } };
      };
    }>(
      `mutation($input: CreateApiKeyInput!) { createApiKey(input: $input) { __typename ... on MutationCreateApiKeySuccess { data { secret apiKey { id consumptionLimits { usd } } } } } }`,
      { input: { apiKeyType: 'INFERENCE', description: 'from graphql', consumptionLimit: { usd: '7.5' } } },
    );
    expect(created.errors).toBeUndefined();
    const { secret, apiKey } = created.data!.createApiKey.data;
    expect(apiKey.consumptionLimits.usd).toBe('7.5');
    expect(secret.slice(-6)).toHaveLength(6);

    const updated = await t.graphql<{ updateApiKey: { data: { description: string; limitPeriod: string } } }>(
      `mutation($input: UpdateApiKeyInput!) { updateApiKey(input: $input) { ... on MutationUpdateApiKeySuccess { data { description limitPeriod } } } }`,
      { input: { id: apiKey.id, description: 'renamed', limitPeriod: 'LIFETIME' } },
    );
    expect(updated.data?.updateApiKey.data).toEqual({ description: 'renamed', limitPeriod: 'LIFETIME' });

    const one = await t.graphql<{ apiKey: { __typename: string; data?: { id: string } } }>(
      `query($id: ID!) { apiKey(id: $id) { __typename ... on QueryApiKeySuccess { data { id } } } }`,
      { id: apiKey.id },
    );
    expect(one.data?.apiKey).toEqual({ __typename: 'QueryApiKeySuccess', data: { id: apiKey.id } });

    const deleted = await t.graphql<{ deleteApiKey: { data: { success: boolean } } }>(
      `mutation($id: ID!) { deleteApiKey(id: $id) { ... on MutationDeleteApiKeySuccess { data { success } } } }`,
      { id: apiKey.id },
    );
    expect(deleted.data?.deleteApiKey.data.success).toBe(true);

    const gone = await t.graphql<{ apiKey: { __typename: string; message: string; code: string } }>(
      `query($id: ID!) { apiKey(id: $id) { __typename ... on Error { message code } } }`,
      { id: apiKey.id },
    );
    expect(gone.data?.apiKey).toMatchObject({ __typename: 'NotFoundError', code: 'NOT_FOUND' });
  });

  it('should return validation failures as ValidationError with issues', async () => {
    const result = await t.graphql<{
      createApiKey: { __typename: string; code: string; issues: { path: string[] }[] };
    }>(
      `mutation { createApiKey(input: { apiKeyType: INFERENCE, description: "${'x'.repeat(70)}" }) { __typename ... on ValidationError { code issues { path message } } } }`,
    );
    expect(result.data?.createApiKey).toMatchObject({
      __typename: 'ValidationError',
      code: 'INVALID_REQUEST',
      issues: [{ path: ['description'] }],
    });
  });

  it('should refuse anonymous and INFERENCE callers with coded errors', async () => {
    const anonymous = await t.graphql('{ apiKeys { id } }', {}, null);
    expect(anonymous.errors?.[0]?.extensions?.code).toBe('AUTHENTICATION_FAILED');
    const { secret } = await t.app.services.apiKeys.create(
      await t.app.services.auth.authenticate({ authorization: `Bearer ${ADMIN_KEY}` }, 'x'),
      { apiKeyType: 'INFERENCE', description: 'inf' },
    );
    const inference = await t.graphql('{ apiKeys { id } }', {}, secret);
    expect(inference.errors?.[0]).toMatchObject({
      message: 'Admin API key required',
      extensions: { code: 'ADMIN_KEY_REQUIRED' },
    });
    const bad = await t.graphql('{ account { id } }', {}, 'wrong');
    expect(bad.errors?.[0]?.extensions?.code).toBe('AUTHENTICATION_FAILED');
  });

  it('should let only ADMIN keys read balances, in GraphQL as in REST', async () => {
    const { secret } = await t.app.services.apiKeys.create(
      await t.app.services.auth.authenticate({ authorization: `Bearer ${ADMIN_KEY}` }, 'x'),
      { apiKeyType: 'INFERENCE', description: 'inf' },
    );
    const BALANCES = '{ account { id balances { currency available } } }';
    const rest = await t.call('/api/v1/billing/balance', { key: secret });
    expect([rest.status, await rest.json()]).toEqual([
      401,
      { error: 'Admin API key required', code: 'ADMIN_KEY_REQUIRED' },
    ]);
    const inference = await t.graphql(BALANCES, {}, secret);
    expect(inference.data ?? null).toBeNull();
    expect(inference.errors?.[0]).toMatchObject({
      message: 'Admin API key required',
      extensions: { code: 'ADMIN_KEY_REQUIRED' },
    });
    expect(
      (await t.graphql<{ account: { id: string } }>('{ account { id name } }', {}, secret)).data?.account.id,
    ).toEqual(expect.any(String));

    expect((await t.call('/api/v1/billing/balance')).status).toBe(200);
    const admin = await t.graphql<{ account: { balances: { currency: string; available: string }[] } }>(BALANCES);
    expect(admin.errors).toBeUndefined();
    expect(admin.data?.account.balances.map((b) => b.currency)).toEqual(['USD', 'DIEM', 'VCU', 'BUNDLED_CREDITS']);
  });

  it('should batch key usage for all keys of a query into one load', async () => {
    const services = t.app.services;
    const original = services.apiKeys.usageOf.bind(services.apiKeys);
    let calls = 0;
    services.apiKeys.usageOf = async (...args) => {
      calls += 1;
      return original(...args);
    };
    try {
      const result = await t.graphql<{ apiKeys: { usage: { currentPeriod: { usd: string } } }[] }>(
        '{ apiKeys { id usage { trailingSevenDays { usd diem } currentPeriod { usd } } } }',
      );
      expect(result.errors).toBeUndefined();
      expect(result.data!.apiKeys.length).toBeGreaterThan(1);
      expect(calls).toBe(1);
    } finally {
      services.apiKeys.usageOf = original;
    }
  });

  it('should serve GraphiQL to browsers', async () => {
    const response = await t.call('/graphql', { key: null, headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('GraphiQL');
  });
});

describe('GraphQL limits', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ GRAPHQL_MAX_DEPTH: '2', GRAPHQL_MAX_COST: '40' });
  });
  afterAll(async () => t.close());

  it('should refuse a query deeper than GRAPHQL_MAX_DEPTH', async () => {
    expect((await t.graphql('{ account { id } }')).errors).toBeUndefined();
    const deep = await t.graphql('{ account { balances { currency } } }');
    expect(deep.errors?.[0]?.message).toMatch(/depth/i);
  });

  it('should refuse a query costlier than GRAPHQL_MAX_COST', async () => {
    const aliases = Array.from({ length: 30 }, (_, i) => `a${i}: account { id }`).join(' ');
    const costly = await t.graphql(`{ ${aliases} }`);
    expect(costly.errors?.[0]?.message).toMatch(/cost/i);
  });
});
