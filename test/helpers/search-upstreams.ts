import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { listenLocally } from './local-server.ts';

/*
 * Local stand-ins for the two search upstreams, speaking their documented protocols on 127.0.0.1:
 * - SearXNG JSON API: GET /search?q=…&format=json&pageno=N[&engines=…] → { query, number_of_results, results[],
 *   answers, corrections, infoboxes, suggestions, unresponsive_engines } (403 unless format=json is allowed).
 * - Brave Web Search API: GET /res/v1/web/search?q=…&count=N with X-Subscription-Token → { type: "search",
 *   query, mixed, web: { type: "search", results: [{ title, url, description, page_age, age, … }] } }.
 */

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly params: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
}

/** A one-off answer for the next request (failures, slowness); returns nothing once it has answered. */
export type Override = (request: IncomingMessage, response: ServerResponse) => void;

export interface FakeUpstream {
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Answers the next requests with these, in order, before the normal behaviour resumes. */
  queue(...overrides: Override[]): void;
  close(): Promise<void>;
}

export const status =
  (code: number, body: unknown = { error: 'upstream failure' }): Override =>
  (_request, response) => {
    response.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };

/** Holds the answer for `ms` (the caller should time out first); the socket is destroyed at close. */
export const slow =
  (ms: number): Override =>
  (_request, response) => {
    const timer = setTimeout(() => {
      if (!response.destroyed) response.writeHead(200, { 'content-type': 'application/json' }).end('{"results":[]}');
    }, ms);
    response.once('close', () => clearTimeout(timer));
  };

export const rawBody =
  (body: string, contentType = 'application/json'): Override =>
  (_request, response) => {
    response.writeHead(200, { 'content-type': contentType }).end(body);
  };

async function startFake(
  handle: (url: URL, request: IncomingMessage, response: ServerResponse) => void,
): Promise<FakeUpstream> {
  const requests: RecordedRequest[] = [];
  const overrides: Override[] = [];
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    requests.push({
      method: request.method ?? '',
      path: url.pathname,
      params: url.searchParams,
      headers: request.headers,
    });
    const override = overrides.shift();
    if (override) override(request, response);
    else handle(url, request, response);
  });
  const listening = await listenLocally(server);
  return {
    url: listening.url,
    requests,
    queue: (...more) => overrides.push(...more),
    close: listening.close,
  };
}

const sendJson = (response: ServerResponse, code: number, body: unknown) => {
  response.writeHead(code, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
};

function hits(query: string, engine: string, first: number, count: number) {
  return Array.from({ length: count }, (_, i) => {
    const n = first + i;
    return {
      n,
      url: `https://${engine}.example.org/articles/${n}`,
      title: `${engine} result ${n} &amp; more`,
      snippet: `Snippet ${n} about <strong>${query.slice(0, 20)}</strong> from ${engine}`,
    };
  });
}

/** A SearXNG instance with json enabled; page sizes follow `pageSizes` (default 10 per page, 3 pages). */
export async function startSearxng(
  options: { pageSizes?: number[]; jsonEnabled?: boolean } = {},
): Promise<FakeUpstream> {
  const pageSizes = options.pageSizes ?? [10, 10, 10];
  return startFake((url, _request, response) => {
    if (url.pathname !== '/search') return sendJson(response, 404, { error: 'not found' });
    if (url.searchParams.get('format') !== 'json' || options.jsonEnabled === false) {
      response.writeHead(403, { 'content-type': 'text/html' }).end('<html><body>403 Forbidden</body></html>');
      return;
    }
    const query = url.searchParams.get('q') ?? '';
    const page = Number(url.searchParams.get('pageno') ?? '1');
    const engine = url.searchParams.get('engines') ?? 'duckduckgo';
    const size = pageSizes[page - 1] ?? 0;
    const first = pageSizes.slice(0, page - 1).reduce((sum, n) => sum + n, 1);
    const results = hits(query, engine, first, size).map((hit) => ({
      url: hit.url,
      title: `${engine} result ${hit.n}`,
      content: `Snippet ${hit.n} about ${query.slice(0, 20)} from ${engine}`,
      publishedDate: hit.n % 2 === 1 ? '2024-03-15T09:00:00' : null,
      thumbnail: '',
      engine,
      parsed_url: ['https', `${engine}.example.org`, `/articles/${hit.n}`, '', '', ''],
      template: 'default.html',
      engines: [engine],
      positions: [hit.n],
      score: 1 / hit.n,
      category: 'general',
    }));
    sendJson(response, 200, {
      query,
      number_of_results: 0,
      results,
      answers: [],
      corrections: [],
      infoboxes: [],
      suggestions: [],
      unresponsive_engines: [],
    });
  });
}

/** The Brave Search API, accepting only `token`. */
export async function startBrave(token: string): Promise<FakeUpstream> {
  return startFake((url, request, response) => {
    if (url.pathname !== '/res/v1/web/search')
      return sendJson(response, 404, { type: 'ErrorResponse', error: { status: 404, code: 'NOT_FOUND' } });
    if (request.headers['x-subscription-token'] !== token) {
      return sendJson(response, 401, {
        type: 'ErrorResponse',
        error: {
          id: 'b2f0c1e4',
          status: 401,
          code: 'SUBSCRIPTION_TOKEN_INVALID',
          detail: 'The provided subscription token is invalid.',
          meta: { component: 'authentication' },
        },
        time: 1_700_000_000,
      });
    }
    const query = url.searchParams.get('q') ?? '';
    const count = Math.min(20, Number(url.searchParams.get('count') ?? '20'));
    const results = hits(query, 'brave', 1, count).map((hit) => ({
      title: hit.title,
      url: hit.url,
      is_source_local: false,
      is_source_both: false,
      description: hit.snippet,
      ...(hit.n % 3 === 0
        ? { age: '2 days ago' }
        : { page_age: `2024-05-1${hit.n % 10}T08:30:00`, age: `May 1${hit.n % 10}, 2024` }),
      profile: {
        name: 'Example',
        url: hit.url,
        long_name: 'brave.example.org',
        img: 'https://imgs.search.brave.com/x.png',
      },
      language: 'en',
      family_friendly: true,
      type: 'search_result',
      subtype: 'generic',
      meta_url: {
        scheme: 'https',
        netloc: 'brave.example.org',
        hostname: 'brave.example.org',
        favicon: 'https://imgs.search.brave.com/f.png',
        path: '› articles',
      },
    }));
    sendJson(response, 200, {
      type: 'search',
      query: {
        original: query,
        show_strict_warning: false,
        is_navigational: false,
        is_news_breaking: false,
        spellcheck_off: true,
        country: 'us',
        bad_results: false,
        should_fallback: false,
        postal_code: '',
        city: '',
        header_country: '',
        more_results_available: true,
        state: '',
      },
      mixed: {
        type: 'mixed',
        main: results.map((_, index) => ({ type: 'web', index, all: false })),
        top: [],
        side: [],
      },
      web: { type: 'search', results, family_friendly: true },
    });
  });
}
