import type { AuthContext } from '../auth/auth-context.ts';
import { requireAccount } from '../auth/permissions.ts';
import type { BillingService } from '../billing/billing.service.ts';
import type { SettledCharge } from '../billing/billing.types.ts';
import { UpstreamError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { SearchResult } from '../providers/search/search-engine.ts';
import type { SearchProviderId, SearchRouter } from '../providers/search/search-routing.ts';
import { PRODUCTS } from '../rate-limits/products.ts';
import type { RateLimiter } from '../rate-limits/rate-limiter.ts';
import { parseInput } from '../validation.ts';
import { AUGMENT_PRICE, augmentUsage } from './pricing.ts';
import { SearchInput } from './search.inputs.ts';

export const SEARCH_NOT_CONFIGURED =
  'Web search is not configured: set SEARXNG_URL (a SearXNG instance) or BRAVE_SEARCH_API_KEY (the Brave Search API), ' +
  'or declare a searxng or brave provider in the LAGOON_CONFIG file (optionally mapped in its `search` section).';

export interface SearchOutcome {
  /** The executed query (trimmed). */
  readonly query: string;
  readonly results: readonly SearchResult[];
  readonly charge: SettledCharge;
}

/**
 * Web search for accounts at 0.01 USD per successful request: validates, picks the upstreams of the requested
 * identifier, and charges through billing.runMetered, so a failed search costs nothing. Talks to the billing
 * service and the search router. The query is never logged nor stored (a privacy promise to users, docs/api.md): logs
 * and the usage entry carry only the identifier, the upstream id and counts.
 */
export class SearchService {
  constructor(
    private readonly deps: {
      billing: BillingService;
      router: SearchRouter;
      logger: Logger;
      rateLimiter?: RateLimiter | undefined;
    },
  ) {}

  async search(auth: AuthContext, input: unknown, options: { signal?: AbortSignal } = {}): Promise<SearchOutcome> {
    const account = requireAccount(auth);
    const { query, limit, search_provider: identifier } = parseInput(SearchInput, input);
    if (!this.deps.router.serves(identifier)) throw new UpstreamError(SEARCH_NOT_CONFIGURED, 'SERVICE_UNAVAILABLE');
    await this.deps.rateLimiter?.admit(account, PRODUCTS.webSearch); // before the hold: a 429 is never charged
    const { result, charge } = await this.deps.billing.runMetered(account, {
      maxCost: AUGMENT_PRICE,
      run: async () => {
        const started = performance.now();
        const found = await this.find(account.requestId, identifier, query, limit, options.signal);
        return { ...found, ms: Math.round(performance.now() - started) };
      },
      usage: (found) =>
        augmentUsage('augment-web-search', `Web search (${identifier}), ${found.results.length} results`, {
          requestId: account.requestId,
          executionTimeMs: found.ms,
          providerId: found.providerId,
        }),
    });
    return { query, results: result.results.slice(0, limit), charge };
  }

  /** Whether an upstream serves this identifier (other services decide whether to search at all). */
  serves(identifier: SearchProviderId = 'brave'): boolean {
    return this.deps.router.serves(identifier);
  }

  /**
   * A search on behalf of another paid call (chat web search), which bills the search price as a line of its
   * own charge: no reservation and no usage entry here. Same validation, upstreams and privacy as {@link search}.
   */
  async searchUnmetered(
    auth: AuthContext,
    input: unknown,
    options: { signal?: AbortSignal } = {},
  ): Promise<{ query: string; results: readonly SearchResult[] }> {
    const account = requireAccount(auth);
    const { query, limit, search_provider: identifier } = parseInput(SearchInput, input);
    if (!this.deps.router.serves(identifier)) throw new UpstreamError(SEARCH_NOT_CONFIGURED, 'SERVICE_UNAVAILABLE');
    const found = await this.find(account.requestId, identifier, query, limit, options.signal);
    return { query, results: found.results.slice(0, limit) };
  }

  private find(
    requestId: string,
    identifier: SearchProviderId,
    query: string,
    limit: number,
    signal: AbortSignal | undefined,
  ) {
    return this.deps.router.search(identifier, query, {
      limit,
      signal,
      onFailure: (target, error) =>
        this.deps.logger.warn(
          {
            reqId: requestId,
            searchProvider: identifier,
            upstream: target.provider.id,
            code: error.code,
            error: error.message,
            ...hint(target.provider.type, error),
          },
          'search upstream failed',
        ),
    });
  }
}

/** An operator-facing pointer for the commonest SearXNG misconfiguration. */
function hint(type: 'searxng' | 'brave', error: UpstreamError): { hint?: string } {
  if (type === 'searxng' && error.message.endsWith('HTTP 403'))
    return { hint: 'SearXNG refuses format=json unless its settings.yml lists json under search.formats' };
  if (type === 'brave' && /HTTP 40[13]$/.test(error.message))
    return { hint: 'check the Brave Search API key (X-Subscription-Token)' };
  return {};
}
