/**
 * The web search capability (src/providers/): one interface, one adapter per upstream API. Adapters
 * know the upstream's protocol only; which adapter serves which `search_provider` identifier is decided by
 * search-routing.ts from the operator config and the env shortcuts.
 */

/** A search result as clients get it: strings; `date` is an ISO 8601 date-time, or "" when the upstream gives none. */
export interface SearchResult {
  readonly title: string;
  readonly url: string;
  readonly content: string;
  readonly date: string;
}

export interface SearchOptions {
  /** The most results wanted; an adapter may return fewer, never needs to return more. */
  readonly limit: number;
  /** An engine name for meta-search upstreams (SearXNG `engines=`); adapters of a single engine ignore it. */
  readonly engineHint?: string | undefined;
  /** Aborts the upstream call (the caller went away). */
  readonly signal?: AbortSignal | undefined;
}

export interface SearchEngine {
  /** The operator's provider id (or `env:<type>` for an env shortcut); for logs and routing, never shown to callers. */
  readonly id: string;
  readonly type: 'searxng' | 'brave';
  /** Runs one query. Failures are UpstreamErrors (502 protocol/HTTP error, 504 timeout). Never logs the query. */
  search(query: string, options: SearchOptions): Promise<SearchResult[]>;
}

/** Network settings every search adapter takes (from the operator's provider entry or the env defaults). */
export interface SearchUpstreamSettings {
  readonly baseUrl: string;
  /** Budget for one search, retries included. */
  readonly timeoutMs: number;
  /** Extra attempts after a connection error or a 5xx answer (before any body was read). */
  readonly maxRetries: number;
  /** Extra request headers from the operator config. */
  readonly headers: Readonly<Record<string, string>>;
}

const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
};

/** Snippets arrive with highlighting markup (`<strong>`) and entities; results carry plain text. */
export function plainText(value: unknown): string {
  if (typeof value !== 'string') return '';
  return value
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity: string, name: string) => {
      if (name.startsWith('#')) {
        const code =
          name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number.parseInt(name.slice(1), 10);
        return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
      }
      return NAMED_ENTITIES[name.toLowerCase()] ?? entity;
    })
    .replace(/\s+/g, ' ')
    .trim();
}

const NO_OFFSET = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$/;

/** An upstream timestamp as ISO 8601 UTC; a value without an offset is read as UTC; anything unreadable is "". */
export function isoDate(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') return '';
  const text = value.trim();
  const normalized = NO_OFFSET.test(text) ? (text.length === 10 ? `${text}T00:00:00Z` : `${text}Z`) : text;
  const time = Date.parse(normalized);
  return Number.isNaN(time) ? '' : new Date(time).toISOString();
}

/** Only http(s) links make a result. */
export { httpUrl } from '../../http-url.ts';

/** A base URL that may carry a path prefix (`https://host/searx`), ready for `new URL(relative, base)`. */
export function withTrailingSlash(base: string): string {
  return base.endsWith('/') ? base : `${base}/`;
}

/** A search upstream's settings when its provider config does not set them. */
export const SEARCH_DEFAULTS = { timeoutMs: 10_000, maxRetries: 1, cooldownMs: 30_000 } as const;
