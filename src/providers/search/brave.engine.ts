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

export const BRAVE_DEFAULT_BASE_URL = 'https://api.search.brave.com';
/** The Brave Web Search API answers at most 20 results per request. */
const BRAVE_MAX_COUNT = 20;

/**
 * The Brave Search API (zero data retention): `GET <base>/res/v1/web/search?q=…&count=N` with the
 * subscription token in `X-Subscription-Token`. It runs one engine, so engine hints are ignored.
 */
export class BraveEngine implements SearchEngine {
  readonly type = 'brave' as const;

  constructor(
    readonly id: string,
    private readonly settings: SearchUpstreamSettings,
    private readonly apiKey: string,
  ) {}

  async search(query: string, options: SearchOptions): Promise<SearchResult[]> {
    const url = new URL('res/v1/web/search', withTrailingSlash(this.settings.baseUrl));
    url.searchParams.set('q', query);
    url.searchParams.set('count', String(Math.min(Math.max(1, options.limit), BRAVE_MAX_COUNT)));
    const body = await getUpstreamJson(
      url,
      { accept: 'application/json', 'x-subscription-token': this.apiKey },
      this.settings,
      options.signal,
    );
    const parsed = BraveWebResponse.safeParse(body);
    if (!parsed.success)
      throw new UpstreamError('The search upstream answered in an unexpected shape', 'UPSTREAM_ERROR');
    const results: SearchResult[] = [];
    for (const raw of parsed.data.web?.results ?? []) {
      if (typeof raw !== 'object' || raw === null) continue;
      const entry = raw as Record<string, unknown>;
      const url = httpUrl(entry.url);
      if (!url) continue;
      results.push({
        title: plainText(entry.title),
        url,
        content: plainText(entry.description),
        date: isoDate(entry.page_age) || absoluteAge(entry.age),
      });
    }
    return results.slice(0, options.limit);
  }
}

/** `web` is absent when nothing was found. */
const BraveWebResponse = z.looseObject({
  type: z.string().optional(),
  web: z.looseObject({ results: z.array(z.unknown()).optional() }).optional(),
});

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** Brave's `age` is "August 13, 2023" or relative ("2 days ago"); only the absolute form is a date. */
function absoluteAge(value: unknown): string {
  if (typeof value !== 'string') return '';
  const match = /^([A-Za-z]{3})[A-Za-z]*\.? (\d{1,2}), (\d{4})$/.exec(value.trim());
  if (!match) return '';
  const month = MONTHS.indexOf((match[1] ?? '').toLowerCase());
  if (month < 0) return '';
  const date = new Date(Date.UTC(Number(match[3]), month, Number(match[2])));
  return Number.isNaN(date.getTime()) ? '' : date.toISOString();
}
