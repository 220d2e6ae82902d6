import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorStatus } from '../../rest/error-map.ts';
import { UpstreamError, type AppError } from '../../src/errors.ts';
import { withEnvProviders } from '../../src/operator-config/env-providers.ts';
import type { ProviderConfig, SearchMapping } from '../../src/operator-config/schema.ts';
import { BraveEngine } from '../../src/providers/search/brave.engine.ts';
import { isoDate, plainText, type SearchEngine, type SearchResult } from '../../src/providers/search/search-engine.ts';
import { buildSearchRoutes, SearchRouter, type SearchTarget } from '../../src/providers/search/search-routing.ts';
import { SearxngEngine } from '../../src/providers/search/searxng.engine.ts';
import { rawBody, startBrave, startSearxng, status, type FakeUpstream } from '../helpers/search-upstreams.ts';

type SearchEnv = Record<'searxngUrl' | 'braveApiKey' | 'braveUrl', string | undefined>;
const NO_ENV: SearchEnv = { searxngUrl: undefined, braveApiKey: undefined, braveUrl: undefined };
/** The routes of the operator's providers with the search env shortcuts merged in, as the app loads them. */
const routesOf = (input: { providers: ProviderConfig[]; mapping: SearchMapping | undefined; env: SearchEnv }) =>
  buildSearchRoutes({
    providers: withEnvProviders({ providers: input.providers }, { search: input.env }).providers,
    mapping: input.mapping,
  });
const describeRoutes = (routes: Record<string, SearchTarget[]>) =>
  Object.fromEntries(
    Object.entries(routes).map(([id, targets]) => [
      id,
      targets.map((t) => `${t.provider.id}${t.engineHint ? `?${t.engineHint}` : ''}`),
    ]),
  );

describe(buildSearchRoutes.name, () => {
  const searx: ProviderConfig = { id: 'searx', type: 'searxng', baseUrl: 'http://searx.local' };
  const braveApi: ProviderConfig = { id: 'brave-api', type: 'brave', apiKey: 'k' };
  const simulator: ProviderConfig = { id: 'simulator', type: 'simulator' };

  it('should serve nothing without configuration', () => {
    expect(describeRoutes(routesOf({ providers: [simulator], mapping: {}, env: NO_ENV }))).toEqual({
      brave: [],
      google: [],
    });
  });

  it('should let SEARXNG_URL alone serve both identifiers with the engine hint', () => {
    const routes = routesOf({ providers: [], mapping: undefined, env: { ...NO_ENV, searxngUrl: 'http://s' } });
    expect(describeRoutes(routes)).toEqual({ brave: ['env:searxng?brave'], google: ['env:searxng?google'] });
  });

  it('should let BRAVE_SEARCH_API_KEY alone serve both identifiers', () => {
    const routes = routesOf({ providers: [], mapping: undefined, env: { ...NO_ENV, braveApiKey: 'k' } });
    expect(describeRoutes(routes)).toEqual({ brave: ['env:brave'], google: ['env:brave'] });
  });

  it('should prefer the Brave API for brave and SearXNG for google when both are set, the other as fallback', () => {
    const routes = routesOf({
      providers: [],
      mapping: undefined,
      env: { searxngUrl: 'http://s', braveApiKey: 'k', braveUrl: undefined },
    });
    expect(describeRoutes(routes)).toEqual({
      brave: ['env:brave', 'env:searxng?brave'],
      google: ['env:searxng?google', 'env:brave'],
    });
  });

  it('should use the operator mapping exactly, and every search provider for an unmapped identifier', () => {
    const routes = routesOf({
      providers: [simulator, searx, braveApi],
      mapping: { google: ['searx', 'brave-api'] },
      env: { ...NO_ENV, searxngUrl: 'http://s' },
    });
    expect(describeRoutes(routes)).toEqual({
      brave: ['brave-api', 'searx?brave', 'env:searxng?brave'],
      google: ['searx?google', 'brave-api'],
    });
  });
});

class FakeProvider implements SearchEngine {
  readonly type = 'brave' as const;
  calls = 0;
  constructor(
    readonly id: string,
    private readonly behaviour: () => SearchResult[],
  ) {}
  async search(): Promise<SearchResult[]> {
    this.calls += 1;
    return this.behaviour();
  }
}
const result = (url: string): SearchResult => ({ title: url, url, content: '', date: '' });
const failing = () => {
  throw new UpstreamError('The search upstream answered HTTP 500', 'UPSTREAM_ERROR');
};
const target = (provider: SearchEngine, cooldownMs = 1_000): SearchTarget => ({
  provider,
  engineHint: undefined,
  cooldownMs,
});

describe(SearchRouter.name, () => {
  it('should fall back to the next upstream on an upstream error and truncate to the limit', async () => {
    const first = new FakeProvider('first', failing);
    const second = new FakeProvider('second', () => ['a', 'b', 'c'].map((u) => result(`https://x/${u}`)));
    const failures: string[] = [];
    const sut = new SearchRouter({ brave: [target(first), target(second)], google: [] });
    const found = await sut.search('brave', 'q', {
      limit: 2,
      onFailure: (t, e) => failures.push(`${t.provider.id}:${e.code}`),
    });
    expect(found).toEqual({ providerId: 'second', results: [result('https://x/a'), result('https://x/b')] });
    expect(failures).toEqual(['first:UPSTREAM_ERROR']);
    expect(sut.serves('brave')).toBe(true);
    expect(sut.serves('google')).toBe(false);
  });

  it('should throw the last upstream error when all fail, and let other errors through untouched', async () => {
    const sut = new SearchRouter({ brave: [target(new FakeProvider('a', failing))], google: [] });
    const failed = await sut.search('brave', 'q', { limit: 1 }).catch((e: unknown) => e);
    expect(failed).toMatchObject({ code: 'UPSTREAM_ERROR' });
    expect(errorStatus(failed as AppError)).toBe(502);
    const buggy = new FakeProvider('buggy', () => {
      throw new TypeError('bug');
    });
    const next = new FakeProvider('next', () => []);
    await expect(
      new SearchRouter({ brave: [target(buggy), target(next)], google: [] }).search('brave', 'q', { limit: 1 }),
    ).rejects.toThrow(TypeError);
    expect(next.calls).toBe(0);
  });

  it('should try an upstream that keeps failing last during its cooldown, and first again after it', async () => {
    let now = 0;
    let healthy = false;
    const flaky = new FakeProvider('flaky', () => (healthy ? [result('https://flaky/')] : failing()));
    const steady = new FakeProvider('steady', () => [result('https://steady/')]);
    const sut = new SearchRouter({ brave: [target(flaky, 1_000), target(steady)], google: [] }, () => now);
    for (let i = 0; i < 3; i += 1) expect((await sut.search('brave', 'q', { limit: 1 })).providerId).toBe('steady');
    expect(flaky.calls).toBe(3);
    healthy = true;
    expect((await sut.search('brave', 'q', { limit: 1 })).providerId).toBe('steady');
    expect(flaky.calls).toBe(3); // cooling: tried last, and steady answered
    now = 1_001;
    expect((await sut.search('brave', 'q', { limit: 1 })).providerId).toBe('flaky');
  });
});

describe('search result normalisation', () => {
  it('should turn snippets into plain text', () => {
    expect(plainText('<strong>Rust</strong> &amp; Go&#x27;s &quot;async&quot;  &#8212;\n fast')).toBe(
      'Rust & Go\'s "async" — fast',
    );
    expect(plainText(undefined)).toBe('');
  });

  it('should give dates as ISO 8601 UTC or ""', () => {
    expect(isoDate('2024-03-15T09:00:00')).toBe('2024-03-15T09:00:00.000Z');
    expect(isoDate('2024-03-15')).toBe('2024-03-15T00:00:00.000Z');
    expect(isoDate('2024-03-15T09:00:00+02:00')).toBe('2024-03-15T07:00:00.000Z');
    expect(isoDate(null)).toBe('');
    expect(isoDate('yesterday')).toBe('');
  });
});

describe('search adapters against local upstreams', () => {
  let searxng: FakeUpstream;
  let brave: FakeUpstream;
  const settings = (baseUrl: string) => ({
    baseUrl,
    timeoutMs: 1_000,
    maxRetries: 0,
    headers: { 'x-operator': 'yes' },
  });
  beforeAll(async () => {
    [searxng, brave] = await Promise.all([startSearxng({ pageSizes: [3, 3, 3, 3] }), startBrave('token')]);
  });
  afterAll(async () => Promise.all([searxng.close(), brave.close()]));

  it('should map engine hints through options.engines ("" = the instance defaults) and send operator headers', async () => {
    const sut = new SearxngEngine('s', settings(searxng.url), { engines: { google: 'google,startpage', brave: '' } });
    searxng.requests.length = 0;
    await sut.search('q', { limit: 2, engineHint: 'google' });
    await sut.search('q', { limit: 2, engineHint: 'brave' });
    expect(searxng.requests.map((r) => r.params.get('engines'))).toEqual(['google,startpage', null]);
    expect(searxng.requests[0]?.headers['x-operator']).toBe('yes');
  });

  it('should page at most three times and keep earlier pages when a later one fails', async () => {
    const sut = new SearxngEngine('s', settings(searxng.url));
    searxng.requests.length = 0;
    expect(await sut.search('q', { limit: 20 })).toHaveLength(9);
    expect(searxng.requests.map((r) => r.params.get('pageno'))).toEqual(['1', '2', '3']);
    searxng.queue(rawBody(JSON.stringify({ results: [{ url: 'https://a/', title: 'A', content: 'a' }] })), status(500));
    expect((await sut.search('q', { limit: 5 })).map((r) => r.url)).toEqual(['https://a/']);
  });

  it('should treat a SearXNG answer with no results and failed engines as an upstream error', async () => {
    searxng.queue(rawBody(JSON.stringify({ query: 'q', results: [], unresponsive_engines: [['google', 'CAPTCHA']] })));
    await expect(new SearxngEngine('s', settings(searxng.url)).search('q', { limit: 5 })).rejects.toMatchObject({
      code: 'UPSTREAM_ERROR',
    });
  });

  it('should keep a base URL path prefix and drop results without an http(s) URL', async () => {
    searxng.queue(
      rawBody(
        JSON.stringify({
          results: [
            { url: 'javascript:alert(1)', title: 'x' },
            { url: 'https://ok/', title: 'ok' },
          ],
        }),
      ),
    );
    searxng.requests.length = 0;
    const found = await new SearxngEngine('s', settings(`${searxng.url}/searx`)).search('q', { limit: 1 });
    expect(searxng.requests[0]?.path).toBe('/searx/search');
    expect(found).toEqual([{ title: 'ok', url: 'https://ok/', content: '', date: '' }]);
  });

  it('should read Brave answers without web results as no results, and absolute ages as dates', async () => {
    brave.queue(rawBody(JSON.stringify({ type: 'search', query: { original: 'q' } })));
    const sut = new BraveEngine('b', settings(brave.url), 'token');
    expect(await sut.search('q', { limit: 5 })).toEqual([]);
    brave.queue(
      rawBody(
        JSON.stringify({
          type: 'search',
          web: {
            type: 'search',
            results: [{ title: 'T', url: 'https://t/', description: 'd', age: 'August 13, 2023' }],
          },
        }),
      ),
    );
    expect(await sut.search('q', { limit: 5 })).toEqual([
      { title: 'T', url: 'https://t/', content: 'd', date: '2023-08-13T00:00:00.000Z' },
    ]);
  });

  it('should report an unreachable upstream as 502 without naming the query', async () => {
    const sut = new BraveEngine('b', { ...settings('http://127.0.0.1:9'), maxRetries: 1 }, 'token');
    const error = await sut.search('secret words', { limit: 1 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'UPSTREAM_ERROR', message: 'The search upstream could not be reached' });
    expect(errorStatus(error as AppError)).toBe(502);
  });
});
