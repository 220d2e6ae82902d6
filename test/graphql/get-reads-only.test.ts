import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { startBrave, type FakeUpstream } from '../helpers/search-upstreams.ts';
import { createAccountWithKey } from '../helpers/services.ts';

const BRAVE_TOKEN = 'BSA-get-token';
const CHAT_INPUT = '{ model: "default", messages: [{ role: USER, content: "Hello there" }], maxCompletionTokens: 8 }';

describe(`GraphQL over GET serves queries only (${testDatabaseKind})`, () => {
  let brave: FakeUpstream;
  let t: TestApp;
  let secret: string;
  let accountId: string;
  const usd = async () =>
    (await t.app.services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD')!.amount;
  const get = (path: string, query: string, accept = 'application/graphql-response+json, application/json') =>
    t.call(`${path}?query=${encodeURIComponent(query)}`, { key: secret, headers: { accept } });

  beforeAll(async () => {
    brave = await startBrave(BRAVE_TOKEN);
    t = await createTestApp({ BRAVE_SEARCH_API_KEY: BRAVE_TOKEN, BRAVE_SEARCH_URL: brave.url });
    ({ secret, accountId } = await createAccountWithKey(t.app.services, { credit: { USD: '1' }, type: 'INFERENCE' }));
  });
  afterAll(async () => {
    await t.close();
    await brave.close();
  });

  it('should not run or charge a search sent by GET, in the query or the mutation form', async () => {
    const before = await usd();
    const asQuery = await get('/graphql', '{ search(input: { query: "by link" }) { __typename } }');
    expect(asQuery.status).toBe(400);
    expect(await asQuery.json()).toMatchObject({
      errors: [
        { message: 'Cannot query field "search" on type "Query".', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } },
      ],
    });
    const asMutation = await get('/graphql', 'mutation { search(input: { query: "by link" }) { __typename } }');
    expect(asMutation.status).toBe(405);
    expect(asMutation.headers.get('allow')).toBe('POST');
    expect(await asMutation.json()).toMatchObject({ errors: [{ extensions: { code: 'BAD_REQUEST' } }] });
    expect(brave.requests).toHaveLength(0);
    expect(await usd()).toBe(before);
  });

  it('should run and charge the search mutation sent by POST', async () => {
    const before = await usd();
    const result = await t.graphql<{ search: { data: { charged: string } } }>(
      'mutation { search(input: { query: "by post", limit: 1 }) { ... on MutationSearchSuccess { data { charged } } } }',
      {},
      secret,
    );
    expect(result.data?.search.data.charged).toBe('0.01');
    expect(before - (await usd())).toBe(10_000_000n);
  });

  it.each([
    ['/graphql', 'text/event-stream'],
    ['/graphql/stream', 'text/event-stream'],
  ])('should refuse a paid subscription sent by GET to %s, charging nothing', async (path, accept) => {
    const before = await usd();
    const response = await get(path, `subscription { chatCompletionStream(input: ${CHAT_INPUT}) { id } }`, accept);
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(await response.json()).toMatchObject({
      errors: [
        {
          message: 'Can only perform a subscription operation from a POST request.',
          extensions: { code: 'BAD_REQUEST' },
        },
      ],
    });
    expect(await usd()).toBe(before);
  });

  it('should refuse a mutation sent by GET to the SSE endpoint', async () => {
    const response = await get(
      '/graphql/stream',
      `mutation { chatCompletion(input: ${CHAT_INPUT}) { __typename } }`,
      'text/event-stream',
    );
    expect(response.status).toBe(405);
  });

  it('should still answer queries over GET, choosing by operationName', async () => {
    const response = await get('/graphql', '{ account { id } }');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { account: { id: accountId } } });
    const named = await t.call(
      `/graphql?operationName=Read&query=${encodeURIComponent('query Read { account { id } } mutation Write { search(input: { query: "x" }) { __typename } }')}`,
      { key: secret },
    );
    expect(named.status).toBe(200);
    const write = await t.call(
      `/graphql?operationName=Write&query=${encodeURIComponent('query Read { account { id } } mutation Write { search(input: { query: "x" }) { __typename } }')}`,
      { key: secret },
    );
    expect(write.status).toBe(405);
    expect(brave.requests).toHaveLength(1); // the POST search above only
  });

  it('should still stream a subscription sent by POST to the SSE endpoint, and charge it', async () => {
    const before = await usd();
    const response = await t.call('/graphql/stream', {
      key: secret,
      headers: { accept: 'text/event-stream' },
      body: { query: `subscription { chatCompletionStream(input: ${CHAT_INPUT}) { id } }` },
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('event: complete');
    expect(await usd()).toBeLessThan(before);
  });
});
