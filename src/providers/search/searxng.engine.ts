import { z } from 'zod';
import { UpstreamError } from '../../errors.ts';
import {
  httpUrl,
  isoDate,
  plainText,
  withTrailingSlash,
  type SearchOptions,
  type SearchEngine,
  type SearchResult,
  type SearchUpstreamSettings,
} from './search-engine.ts';
import { getUpstreamJson } from './upstream-http.ts';

/**
 * `options` of a `searxng` provider in the operator config. `engines` overrides the engine list sent for an
 * engine hint (`{ google: "google,startpage" }`); an empty string sends no `engines` parameter, so the instance
 * uses its own default engines.
 */
export const SearxngOptions = z.strictObject({ engines: z.record(z.string().min(1), z.string()).optional() });
export type SearxngOptions = z.output<typeof SearxngOptions>;

/** SearXNG pages hold about ten results each; fetch at most this many pages to fill a limit of 20. */
const MAX_PAGES = 3;

/**
 * A self-hosted SearXNG instance through its JSON API: `GET <base>/search?q=…&format=json&pageno=N`, with
 * `engines=<hint>` when an identifier asks for one engine. The instance must allow the json format
 * (settings.yml `search.formats`), or it answers 403.
 */
export class SearxngEngine implements SearchEngine {
  readonly type = 'searxng' as const;

  constructor(
    readonly id: string,
    private readonly settings: SearchUpstreamSettings,
    private readonly options: SearxngOptions = {},
  ) {}

  async search(query: string, options: SearchOptions): Promise<SearchResult[]> {
    const engines =
      options.engineHint === undefined ? undefined : (this.options.engines?.[options.engineHint] ?? options.engineHint);
    const results: SearchResult[] = [];
    const seen = new Set<string>();
    for (let page = 1; page <= MAX_PAGES && results.length < options.limit; page += 1) {
      let body: unknown;
      try {
        body = await getUpstreamJson(
          this.url(query, page, engines),
          { accept: 'application/json' },
          this.settings,
          options.signal,
        );
      } catch (error) {
        // Later pages only top up the first; a failure there keeps what was already found.
        if (page > 1) break;
        throw error;
      }
      const { items, unresponsive } = parsePage(body);
      if (page === 1 && items.length === 0 && unresponsive > 0) {
        throw new UpstreamError('The search upstream’s engines did not answer', 'UPSTREAM_ERROR');
      }
      const before = results.length;
      for (const item of items) {
        if (seen.has(item.url)) continue;
        seen.add(item.url);
        results.push(item);
      }
      if (results.length === before) break;
    }
    return results.slice(0, options.limit);
  }

  private url(query: string, page: number, engines: string | undefined): URL {
    const url = new URL('search', withTrailingSlash(this.settings.baseUrl));
    url.searchParams.set('q', query);
    url.searchParams.set('format', 'json');
    url.searchParams.set('pageno', String(page));
    if (engines) url.searchParams.set('engines', engines);
    return url;
  }
}

const SearxngPage = z.looseObject({
  results: z.array(z.unknown()),
  unresponsive_engines: z.array(z.unknown()).optional(),
});

function parsePage(body: unknown): { items: SearchResult[]; unresponsive: number } {
  const page = SearxngPage.safeParse(body);
  if (!page.success) throw new UpstreamError('The search upstream answered in an unexpected shape', 'UPSTREAM_ERROR');
  const items: SearchResult[] = [];
  for (const raw of page.data.results) {
    if (typeof raw !== 'object' || raw === null) continue;
    const entry = raw as Record<string, unknown>;
    const url = httpUrl(entry.url);
    if (!url) continue;
    items.push({
      title: plainText(entry.title),
      url,
      content: plainText(entry.content),
      date: isoDate(entry.publishedDate ?? entry.pubdate),
    });
  }
  return { items, unresponsive: page.data.unresponsive_engines?.length ?? 0 };
}
