import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { startBrave, startSearxng, status, type FakeUpstream } from '../helpers/search-upstreams.ts';
import { createAccountWithKey } from '../helpers/services.ts';

const BRAVE_TOKEN = 'BSA-graphql-token';
const SEARCH = `mutation Search($input: SearchInput!) {
  search(input: $input) {
    __typename
    ... on MutationSearchSuccess { data { query results { title url content date } } }
    ... on Error { message code }
    ... on ValidationError { issues { path message } }
  }
}`;

interface SearchPayload {
  search: {
    __typename: string;
    data?: { query: string; results: { title: string; url: string; content: string; date: string }[] };
    message?: string;
    code?: string;
    issues?: { path: string[]; message: string }[];
  };
}

describe(`GraphQL search (${testDatabaseKind})`, () => {
  let searxng: FakeUpstream;
  let brave: FakeUpstream;
  let t: TestApp;
  let secret: string;
  let accountId: string;
  const usd = async () =>
    (await t.app.services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD')!.amount;
  const search = async (input: Record<string, unknown>, key: string | null = secret) =>
    t.graphql<SearchPayload>(SEARCH, { input }, key);

  beforeAll(async () => {
    [searxng, brave] = await Promise.all([startSearxng(), startBrave(BRAVE_TOKEN)]);
    // Both env shortcuts: brave → the Brave API, google → SearXNG with the engine hint.
    t = await createTestApp({
      SEARXNG_URL: searxng.url,
      BRAVE_SEARCH_API_KEY: BRAVE_TOKEN,
      BRAVE_SEARCH_URL: brave.url,
    });
    ({ secret, accountId } = await createAccountWithKey(t.app.services, { credit: { USD: '1' }, type: 'INFERENCE' }));
  });
  afterAll(async () => {
    await t.close();
    await Promise.all([searxng.close(), brave.close()]);
  });

  it('should search with the default BRAVE provider and return typed results, charging 0.01 USD', async () => {
    const before = await usd();
    const charged = await t.graphql<{ search: { data: { charged: string; currency: string } } }>(
      'mutation($q: String!) { search(input: { query: $q, limit: 1 }) { ... on MutationSearchSuccess { data { charged currency } } } }',
      { q: 'what did it cost' },
      secret,
    );
    expect(charged.data?.search.data).toEqual({ charged: '0.01', currency: 'USD' });
    expect(before - (await usd())).toBe(10_000_000n);
    const result = await search({ query: ' graphql pothos ' });
    expect(result.errors).toBeUndefined();
    expect(result.data?.search.__typename).toBe('MutationSearchSuccess');
    expect(result.data?.search.data?.query).toBe('graphql pothos');
    expect(result.data?.search.data?.results).toHaveLength(10);
    expect(result.data?.search.data?.results[0]).toEqual({
      title: 'brave result 1 & more',
      url: 'https://brave.example.org/articles/1',
      content: 'Snippet 1 about graphql pothos from brave',
      date: '2024-05-11T08:30:00.000Z',
    });
    expect(brave.requests.at(-1)?.params.get('q')).toBe('graphql pothos');
    expect(before - (await usd())).toBe(20_000_000n);
  });

  it('should send GOOGLE to SearXNG with engines=google and honour limit', async () => {
    const result = await search({ query: 'yoga', searchProvider: 'GOOGLE', limit: 4 });
    expect(result.data?.search.data?.results.map((r) => r.url)).toEqual(
      [1, 2, 3, 4].map((n) => `https://google.example.org/articles/${n}`),
    );
    expect(Object.fromEntries(searxng.requests.at(-1)!.params)).toEqual({
      q: 'yoga',
      format: 'json',
      pageno: '1',
      engines: 'google',
    });
  });

  it('should give the same results as REST', async () => {
    const rest = await t.call('/api/v1/augment/search', {
      body: { query: 'same', limit: 3, search_provider: 'google' },
      key: secret,
    });
    const gql = await search({ query: 'same', limit: 3, searchProvider: 'GOOGLE' });
    expect(gql.data?.search.data).toEqual(await rest.json());
  });

  it.each([
    [{ query: '' }, 'query'],
    [{ query: 'y'.repeat(401) }, 'query'],
    [{ query: 'ok', limit: 0 }, 'limit'],
    [{ query: 'ok', limit: 21 }, 'limit'],
  ])('should return a ValidationError naming the field for %j', async (input, field) => {
    const result = await search(input);
    expect(result.errors).toBeUndefined();
    expect(result.data?.search).toMatchObject({
      __typename: 'ValidationError',
      code: 'INVALID_REQUEST',
      issues: [{ path: [field] }],
    });
  });

  it('should reject an unknown provider at the GraphQL layer', async () => {
    const result = await search({ query: 'ok', searchProvider: 'BING' });
    expect(result.errors?.[0]?.message).toMatch(/SearchEngine/);
  });

  it('should fall back to the next upstream of the identifier when the first fails, charging once', async () => {
    brave.queue(status(500), status(500));
    searxng.requests.length = 0;
    const before = await usd();
    const result = await search({ query: 'fallback', limit: 2 });
    expect(result.data?.search.data?.results.map((r) => r.url)).toEqual([
      'https://brave.example.org/articles/1',
      'https://brave.example.org/articles/2',
    ]);
    expect(searxng.requests.map((r) => r.params.get('engines'))).toEqual(['brave']);
    expect(before - (await usd())).toBe(10_000_000n);
  });

  it('should return UpstreamError when every upstream fails, and charge nothing', async () => {
    brave.queue(status(500), status(502));
    searxng.queue(status(500), status(500));
    const before = await usd();
    const result = await search({ query: 'failing' });
    expect(result.data?.search).toEqual({
      __typename: 'UpstreamError',
      message: 'The search upstream answered HTTP 500',
      code: 'UPSTREAM_ERROR',
    });
    expect(await usd()).toBe(before);
  });

  it('should return InsufficientBalanceError for an account without funds', async () => {
    const poor = await createAccountWithKey(t.app.services, { type: 'INFERENCE' });
    const result = await search({ query: 'poor' }, poor.secret);
    expect(result.data?.search).toMatchObject({ __typename: 'InsufficientBalanceError', code: 'INSUFFICIENT_BALANCE' });
  });

  it('should refuse an anonymous caller with AUTHENTICATION_FAILED', async () => {
    const result = await search({ query: 'anonymous' }, null);
    expect(result.errors?.[0]?.extensions?.code).toBe('AUTHENTICATION_FAILED');
  });
});
