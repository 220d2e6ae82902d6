import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatNano } from '../../src/billing/money.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { rawBody, slow, startBrave, startSearxng, status, type FakeUpstream } from '../helpers/search-upstreams.ts';
import { createAccountWithKey } from '../helpers/services.ts';

const BRAVE_TOKEN = 'BSA-test-subscription-token';
const PRICE_NANO = 10_000_000n; // 0.01 USD

interface SearchBody {
  query: string;
  results: { title: string; url: string; content: string; date: string }[];
}
interface ErrorBody {
  error: string;
  code: string;
  issues?: { path: (string | number)[]; message: string }[];
}

/** A funded account on `t`, with helpers to search and to read what it was charged. */
async function fundedAccount(t: TestApp, usd = '1') {
  const { secret, accountId } = await createAccountWithKey(t.app.services, {
    credit: usd === '0' ? {} : { USD: usd },
    type: 'INFERENCE',
  });
  const search = async (body: unknown) => {
    const response = await t.call('/api/v1/augment/search', { body, key: secret });
    return {
      status: response.status,
      headers: response.headers,
      body: (await response.json()) as SearchBody & ErrorBody,
    };
  };
  const usd$ = async () => (await t.app.services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD')!;
  const usage = () =>
    t.app.database.db.selectFrom('usage_entries').selectAll().where('account_id', '=', accountId).execute();
  return { secret, accountId, search, balance: usd$, usage };
}

describe(`REST POST /api/v1/augment/search (${testDatabaseKind})`, () => {
  describe('with a Brave and a SearXNG provider mapped in the operator config', () => {
    let searxng: FakeUpstream;
    let brave: FakeUpstream;
    let dir: string;
    let t: TestApp;
    let account: Awaited<ReturnType<typeof fundedAccount>>;

    beforeAll(async () => {
      [searxng, brave] = await Promise.all([startSearxng(), startBrave(BRAVE_TOKEN)]);
      dir = await mkdtemp(join(tmpdir(), 'lagoon-search-'));
      const path = join(dir, 'operator.yaml');
      await writeFile(
        path,
        [
          'providers:',
          '  - { id: searx, type: searxng, baseUrl: "' + searxng.url + '", timeoutMs: 400, maxRetries: 1 }',
          '  - { id: brave-api, type: brave, baseUrl: "' +
            brave.url +
            '", apiKey: ' +
            BRAVE_TOKEN +
            ', timeoutMs: 400 }',
          'search:',
          '  brave: brave-api',
          '  google: searx',
        ].join('\n'),
      );
      t = await createTestApp({ LAGOON_CONFIG: path });
      account = await fundedAccount(t);
    });
    afterAll(async () => {
      await t.close();
      await Promise.all([searxng.close(), brave.close(), rm(dir, { recursive: true, force: true })]);
    });

    it('should serve brave through the Brave Search API by default, with its real request shape', async () => {
      brave.requests.length = 0;
      const { status: code, body, headers } = await account.search({ query: '  rust async runtimes  ' });
      expect(code).toBe(200);
      expect(brave.requests).toHaveLength(1);
      const request = brave.requests[0]!;
      expect(request).toMatchObject({ method: 'GET', path: '/res/v1/web/search' });
      expect(Object.fromEntries(request.params)).toEqual({ q: 'rust async runtimes', count: '10' });
      expect(request.headers['x-subscription-token']).toBe(BRAVE_TOKEN);
      expect(request.headers.accept).toBe('application/json');
      expect(searxng.requests).toHaveLength(0);

      expect(body.query).toBe('rust async runtimes');
      expect(body.results).toHaveLength(10);
      expect(body.results[0]).toEqual({
        title: 'brave result 1 & more',
        url: 'https://brave.example.org/articles/1',
        content: 'Snippet 1 about rust async runtimes from brave',
        date: '2024-05-11T08:30:00.000Z',
      });
      expect(body.results[2]?.date).toBe(''); // only a relative age ("2 days ago")
      expect(Object.keys(body)).toEqual(['query', 'results']);
      expect(headers.get('x-balance-usd')).toMatch(/^0\.9\d*$/);
    });

    it('should serve google through SearXNG with the engine hint, mapping publishedDate', async () => {
      searxng.requests.length = 0;
      const { status: code, body } = await account.search({
        query: 'privacy policy',
        search_provider: 'google',
        limit: 5,
      });
      expect(code).toBe(200);
      expect(searxng.requests).toHaveLength(1);
      expect(searxng.requests[0]?.path).toBe('/search');
      expect(Object.fromEntries(searxng.requests[0]!.params)).toEqual({
        q: 'privacy policy',
        format: 'json',
        pageno: '1',
        engines: 'google',
      });
      expect(body.results).toHaveLength(5);
      expect(body.results[0]).toEqual({
        title: 'google result 1',
        url: 'https://google.example.org/articles/1',
        content: 'Snippet 1 about privacy policy from google',
        date: '2024-03-15T09:00:00.000Z',
      });
      expect(body.results[1]?.date).toBe('');
    });

    it('should honour limit: Brave gets count, SearXNG is paged until the limit is filled', async () => {
      brave.requests.length = 0;
      expect((await account.search({ query: 'one', limit: 1 })).body.results).toHaveLength(1);
      expect(brave.requests[0]?.params.get('count')).toBe('1');
      expect((await account.search({ query: 'twenty', limit: 20 })).body.results).toHaveLength(20);
      expect(brave.requests[1]?.params.get('count')).toBe('20');

      searxng.requests.length = 0;
      const paged = await account.search({ query: 'paged', limit: 20, search_provider: 'google' });
      expect(paged.body.results).toHaveLength(20);
      expect(new Set(paged.body.results.map((r) => r.url)).size).toBe(20);
      expect(searxng.requests.map((r) => r.params.get('pageno'))).toEqual(['1', '2']);
    });

    it('should charge exactly 0.01 USD and write one usage entry per successful search, without the query', async () => {
      const before = await account.balance();
      const idsBefore = new Set((await account.usage()).map((e) => e.id));
      const { status: code, headers } = await account.search({ query: 'charged query text', search_provider: 'brave' });
      expect(code).toBe(200);
      const after = await account.balance();
      expect(before.amount - after.amount).toBe(PRICE_NANO);
      expect(after.reserved).toBe(0n);
      expect(headers.get('x-balance-usd')).toBe(formatNano(after.amount));
      const entries = await account.usage();
      const added = entries.filter((e) => !idsBefore.has(e.id));
      expect(added).toHaveLength(1);
      expect(added[0]).toMatchObject({
        sku: 'augment-web-search',
        amount: -PRICE_NANO,
        currency: 'USD',
        model_type: 'AUGMENT',
        units: '1',
        notes: 'Web search (brave), 10 results',
      });
      expect(JSON.stringify(entries, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))).not.toContain(
        'charged query text',
      );
    });

    it.each([
      [{ query: '' }, 'query'],
      [{ query: '    ' }, 'query'],
      [{ query: 'x'.repeat(401) }, 'query'],
      [{}, 'query'],
      [{ query: 42 }, 'query'],
      [{ query: 'ok', limit: 0 }, 'limit'],
      [{ query: 'ok', limit: 21 }, 'limit'],
      [{ query: 'ok', limit: 2.5 }, 'limit'],
      [{ query: 'ok', limit: '5' }, 'limit'],
      [{ query: 'ok', search_provider: 'bing' }, 'search_provider'],
    ])('should answer 400 naming the field for %j, with no upstream call and no charge', async (body, field) => {
      const calls = brave.requests.length + searxng.requests.length;
      const before = await account.balance();
      const { status: code, body: error } = await account.search(body);
      expect(code).toBe(400);
      expect(error.code).toBe('INVALID_REQUEST');
      expect(error.issues?.[0]?.path).toEqual([field]);
      expect(error.error).toContain(field);
      expect(brave.requests.length + searxng.requests.length).toBe(calls);
      expect((await account.balance()).amount).toBe(before.amount);
    });

    it('should accept exactly 400 characters, counted as characters not UTF-16 units', async () => {
      expect((await account.search({ query: 'a'.repeat(400) })).status).toBe(200);
      expect((await account.search({ query: '😀'.repeat(400) })).status).toBe(200);
      expect((await account.search({ query: '😀'.repeat(401) })).status).toBe(400);
    });

    it('should answer 400 for a body that is not JSON', async () => {
      const response = await t.call('/api/v1/augment/search', { body: '{"query": ', key: account.secret });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ code: 'INVALID_REQUEST' });
    });

    it('should retry once on an upstream 500, then answer 502 UPSTREAM_ERROR and charge nothing', async () => {
      searxng.requests.length = 0;
      searxng.queue(status(500), status(500));
      const before = await account.balance();
      const entries = (await account.usage()).length;
      const { status: code, body } = await account.search({ query: 'broken upstream', search_provider: 'google' });
      expect(code).toBe(502);
      expect(body).toEqual({ error: 'The search upstream answered HTTP 500', code: 'UPSTREAM_ERROR' });
      expect(searxng.requests).toHaveLength(2);
      const after = await account.balance();
      expect(after).toEqual(before);
      expect(await account.usage()).toHaveLength(entries);
    });

    it('should succeed when the retry after a 500 succeeds', async () => {
      searxng.requests.length = 0;
      searxng.queue(status(503));
      const { status: code, body } = await account.search({ query: 'flaky', search_provider: 'google', limit: 2 });
      expect(code).toBe(200);
      expect(body.results).toHaveLength(2);
      expect(searxng.requests).toHaveLength(2);
    });

    it('should not retry a 4xx: a refused Brave key is a 502 after one request', async () => {
      brave.requests.length = 0;
      brave.queue(status(401, { type: 'ErrorResponse', error: { status: 401, code: 'SUBSCRIPTION_TOKEN_INVALID' } }));
      const { status: code, body } = await account.search({ query: 'refused' });
      expect(code).toBe(502);
      expect(body.code).toBe('UPSTREAM_ERROR');
      expect(brave.requests).toHaveLength(1);
    });

    it('should answer 502 for an answer that is not the upstream JSON', async () => {
      brave.queue(rawBody('<html>maintenance</html>', 'text/html'));
      expect((await account.search({ query: 'html answer' })).body.code).toBe('UPSTREAM_ERROR');
      searxng.queue(rawBody('{"unexpected": true}'));
      expect((await account.search({ query: 'odd shape', search_provider: 'google' })).status).toBe(502);
    });

    it('should answer 504 REQUEST_TIMEOUT when the upstream is slower than its timeoutMs, and charge nothing', async () => {
      brave.queue(slow(5_000));
      const before = await account.balance();
      const started = Date.now();
      const { status: code, body } = await account.search({ query: 'slow upstream' });
      expect(code).toBe(504);
      expect(body).toEqual({ error: 'The search upstream did not answer within 400 ms', code: 'REQUEST_TIMEOUT' });
      // Before the upstream's answer was due: the timeout ended the call, not the upstream.
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(await account.balance()).toEqual(before);
    });

    it('should answer 402 INSUFFICIENT_BALANCE without calling the upstream when the account cannot pay', async () => {
      const poor = await fundedAccount(t, '0');
      const calls = brave.requests.length;
      const { status: code, body } = await poor.search({ query: 'no money' });
      expect(code).toBe(402);
      expect(body.code).toBe('INSUFFICIENT_BALANCE');
      expect(brave.requests.length).toBe(calls);
      expect(await poor.usage()).toHaveLength(0);
    });

    it('should answer the x402 discovery 402 without credentials', async () => {
      const response = await t.call('/api/v1/augment/search', { body: { query: 'x' }, key: null });
      expect(response.status).toBe(402);
      expect(await response.json()).toMatchObject({ x402Version: 2, accepts: expect.any(Array) });
    });

    it('should document the route in the OpenAPI document', async () => {
      const doc = (await (await t.call('/api/v1/openapi.json')).json()) as {
        paths: Record<string, { post?: { requestBody?: unknown } }>;
      };
      expect(doc.paths['/api/v1/augment/search']?.post?.requestBody).toBeDefined();
    });
  });

  describe('with only SEARXNG_URL set', () => {
    let searxng: FakeUpstream;
    let t: TestApp;
    let account: Awaited<ReturnType<typeof fundedAccount>>;
    beforeAll(async () => {
      searxng = await startSearxng();
      t = await createTestApp({ SEARXNG_URL: `${searxng.url}/` });
      account = await fundedAccount(t);
    });
    afterAll(async () => {
      await t.close();
      await searxng.close();
    });

    it('should serve both identifiers from SearXNG, passing the engine name as a hint', async () => {
      const braveAnswer = await account.search({ query: 'zero retention' });
      const googleAnswer = await account.search({ query: 'proxied', search_provider: 'google' });
      expect([braveAnswer.status, googleAnswer.status]).toEqual([200, 200]);
      expect(searxng.requests.map((r) => [r.path, r.params.get('engines'), r.params.get('format')])).toEqual([
        ['/search', 'brave', 'json'],
        ['/search', 'google', 'json'],
      ]);
      expect(braveAnswer.body.results[0]?.url).toBe('https://brave.example.org/articles/1');
      expect(googleAnswer.body.results[0]?.url).toBe('https://google.example.org/articles/1');
    });
  });

  describe('with only BRAVE_SEARCH_API_KEY set', () => {
    let brave: FakeUpstream;
    let t: TestApp;
    let account: Awaited<ReturnType<typeof fundedAccount>>;
    beforeAll(async () => {
      brave = await startBrave(BRAVE_TOKEN);
      t = await createTestApp({ BRAVE_SEARCH_API_KEY: BRAVE_TOKEN, BRAVE_SEARCH_URL: brave.url });
      account = await fundedAccount(t);
    });
    afterAll(async () => {
      await t.close();
      await brave.close();
    });

    it('should serve both identifiers from the Brave Search API', async () => {
      expect((await account.search({ query: 'a', search_provider: 'brave', limit: 3 })).body.results).toHaveLength(3);
      expect((await account.search({ query: 'b', search_provider: 'google', limit: 4 })).body.results).toHaveLength(4);
      expect(brave.requests.map((r) => [r.path, r.params.get('count'), r.headers['x-subscription-token']])).toEqual([
        ['/res/v1/web/search', '3', BRAVE_TOKEN],
        ['/res/v1/web/search', '4', BRAVE_TOKEN],
      ]);
    });
  });

  describe('with no search provider configured', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp();
    });
    afterAll(async () => t.close());

    it('should answer 503 SERVICE_UNAVAILABLE naming what to configure, and charge nothing', async () => {
      const account = await fundedAccount(t);
      const { status: code, body } = await account.search({ query: 'anything' });
      expect(code).toBe(503);
      expect(body.code).toBe('SERVICE_UNAVAILABLE');
      expect(body.error).toMatch(/SEARXNG_URL/);
      expect(body.error).toMatch(/BRAVE_SEARCH_API_KEY/);
      expect(body.error).toMatch(/LAGOON_CONFIG/);
      expect((await account.balance()).amount).toBe(1_000_000_000n);
      expect((await account.search({ query: '' })).status).toBe(400);
    });
  });
});
