import { UpstreamHealth } from '../upstream-health.ts';
import { UpstreamError } from '../../errors.ts';
import type { ProviderConfig, SearchMapping } from '../../operator-config/schema.ts';
import { factoryOf } from '../registry.ts';
import { SEARCH_DEFAULTS, type SearchEngine, type SearchResult } from './search-engine.ts';

/** The `search_provider` identifiers clients send (docs/api.md); `brave`, the zero-retention one, is the default. */
export const SEARCH_PROVIDER_IDS = ['brave', 'google'] as const;
export type SearchProviderId = (typeof SEARCH_PROVIDER_IDS)[number];

/** Consecutive failures after which an upstream is tried last, for its cooldown. */
const FAILURES_BEFORE_COOLDOWN = 3;

/** One upstream that can serve an identifier, with the engine hint it is given. */
export interface SearchTarget {
  readonly provider: SearchEngine;
  readonly engineHint: string | undefined;
  readonly cooldownMs: number;
}

interface Candidate {
  readonly provider: SearchEngine;
  readonly cooldownMs: number;
}

/**
 * Which upstreams serve each identifier, in fallback order:
 * - the operator file's `search` mapping, when it names the identifier, is used exactly;
 * - otherwise every configured search upstream (the file's `brave`/`searxng` providers, then the env shortcuts'
 *   ones, src/operator-config/env-providers.ts),
 *   the matching kind first: `brave` prefers the Brave API, `google` prefers SearXNG. So BRAVE_SEARCH_API_KEY
 *   alone serves both identifiers, and SEARXNG_URL alone serves both.
 * A SearXNG upstream always gets the identifier as its engine hint (`engines=brave` / `engines=google`).
 */
export function buildSearchRoutes(input: {
  providers: readonly ProviderConfig[];
  mapping: SearchMapping | undefined;
}): Record<SearchProviderId, SearchTarget[]> {
  const candidates = new Map<string, Candidate>();
  for (const config of input.providers) {
    const provider = factoryOf(config, 'search')?.(config);
    if (provider) candidates.set(config.id, { provider, cooldownMs: config.cooldownMs ?? SEARCH_DEFAULTS.cooldownMs });
  }
  const all = [...candidates.values()];
  const ofType = (type: SearchEngine['type']) => all.filter((c) => c.provider.type === type);
  const automatic: Record<SearchProviderId, Candidate[]> = {
    brave: [...ofType('brave'), ...ofType('searxng')],
    google: [...ofType('searxng'), ...ofType('brave')],
  };
  const route = (id: SearchProviderId): SearchTarget[] => {
    const mapped = input.mapping?.[id];
    // The operator config's cross-check guarantees that mapped ids name search providers.
    const chosen = mapped ? mapped.flatMap((providerId) => candidates.get(providerId) ?? []) : automatic[id];
    return chosen.map((c) => ({ ...c, engineHint: c.provider.type === 'searxng' ? id : undefined }));
  };
  return { brave: route('brave'), google: route('google') };
}

/**
 * Runs a search on the upstreams of an identifier: the first that answers wins; an upstream error moves on to
 * the next. An upstream that keeps failing is tried last until its cooldown ends (never skipped, so a single
 * upstream still gets every request). Health is per process: it is only an optimisation.
 */
export class SearchRouter {
  private readonly health: UpstreamHealth;

  constructor(
    private readonly routes: Readonly<Record<SearchProviderId, readonly SearchTarget[]>>,
    now: () => number = Date.now,
  ) {
    this.health = new UpstreamHealth({ failuresBeforeCooldown: FAILURES_BEFORE_COOLDOWN }, now);
  }

  serves(id: SearchProviderId): boolean {
    return this.routes[id].length > 0;
  }

  async search(
    id: SearchProviderId,
    query: string,
    options: {
      limit: number;
      signal?: AbortSignal | undefined;
      onFailure?: (target: SearchTarget, error: UpstreamError) => void;
    },
  ): Promise<{ results: SearchResult[]; providerId: string }> {
    const ordered = this.health.healthyFirst(this.routes[id], (target) => target.provider.id);
    let lastError: UpstreamError | undefined;
    for (const target of ordered) {
      try {
        const results = await target.provider.search(query, {
          limit: options.limit,
          engineHint: target.engineHint,
          signal: options.signal,
        });
        this.health.succeeded(target.provider.id);
        return { results: results.slice(0, options.limit), providerId: target.provider.id };
      } catch (error) {
        if (!(error instanceof UpstreamError)) throw error;
        lastError = error;
        this.health.failed(target.provider.id, target.cooldownMs);
        options.onFailure?.(target, error);
        if (options.signal?.aborted) break;
      }
    }
    throw lastError ?? new UpstreamError(`No search upstream serves "${id}"`, 'SERVICE_UNAVAILABLE');
  }
}
