import { z } from 'zod';
import type { AuthContext } from '../auth/auth-context.ts';
import { requireAccount } from '../auth/permissions.ts';
import type { BillingService } from '../billing/billing.service.ts';
import type { SettledCharge } from '../billing/billing.types.ts';
import { UpstreamError, ValidationError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { PRODUCTS } from '../rate-limits/products.ts';
import type { RateLimiter } from '../rate-limits/rate-limiter.ts';
import { parseInput } from '../validation.ts';
import { AUGMENT_PRICE, augmentUsage } from './pricing.ts';
import { PageFetchError } from './scrape/page-fetch.ts';
import type { WebScraper } from './scrape/web-scraper.ts';

/** Pages are cut to this many tokens of Markdown (a long article is far below it; the byte limit comes first). */
const SCRAPE_MAX_TOKENS = 100_000;

/** Sites that refuse automated readers: asked for at once, refused at once, never fetched nor charged. */
const REFUSED_SITES = ['x.com', 'twitter.com', 'reddit.com', 'redd.it'];

export const ScrapeInput = z.object({
  url: z
    .url({ protocol: /^https?$/, error: 'Must be an http or https URL' })
    .max(2048, 'At most 2048 characters')
    .describe('The page to read (http or https; public addresses only).'),
});

export interface ScrapeOutcome {
  readonly url: string;
  /** The page as Markdown. */
  readonly content: string;
  readonly charge: SettledCharge;
}

/**
 * POST /augment/scrape: one web page as Markdown, 0.01 USD per page read. The page is fetched by the same scraper
 * as chat web scraping (public addresses only, size and time caps) and converted in the extraction workers; a page
 * that cannot be read costs nothing. Like web search, logs carry the host only, never the URL's path.
 */
export class ScrapeService {
  constructor(
    private readonly deps: {
      billing: BillingService;
      scraper: WebScraper;
      logger: Logger;
      rateLimiter?: RateLimiter | undefined;
    },
  ) {}

  async scrape(auth: AuthContext, input: unknown, options: { signal?: AbortSignal } = {}): Promise<ScrapeOutcome> {
    const account = requireAccount(auth);
    const { url } = parseInput(ScrapeInput, input);
    const host = new URL(url).hostname.toLowerCase();
    if (REFUSED_SITES.some((site) => host === site || host.endsWith(`.${site}`)))
      throw new ValidationError(`Invalid request: url: ${host} does not allow automated access`, [
        { path: ['url'], message: `${host} does not allow automated access` },
      ]);
    await this.deps.rateLimiter?.admit(account, PRODUCTS.webScrape); // before the hold: a 429 is never charged
    const { result, charge } = await this.deps.billing.runMetered(account, {
      maxCost: AUGMENT_PRICE,
      run: async () => {
        const started = performance.now();
        const page = await this.read(account.requestId, url, host, options.signal);
        return { page, ms: Math.round(performance.now() - started) };
      },
      usage: ({ page, ms }) =>
        augmentUsage('augment-web-scrape', `Web scrape, ${page.tokens} tokens`, {
          requestId: account.requestId,
          executionTimeMs: ms,
        }),
    });
    return { url, content: result.page.text, charge };
  }

  private async read(requestId: string, url: string, host: string, signal: AbortSignal | undefined) {
    try {
      return await this.deps.scraper.read(url, { maxTokens: SCRAPE_MAX_TOKENS, markdown: true, signal });
    } catch (error) {
      if (!(error instanceof PageFetchError)) throw error;
      this.deps.logger.info({ reqId: requestId, host, reason: error.reason }, 'scrape: page not read');
      if (error.kind === 'refused')
        throw new ValidationError(`Invalid request: url: ${error.reason}`, [{ path: ['url'], message: error.reason }]);
      throw new UpstreamError(`The page could not be read: ${error.reason}`, 'UPSTREAM_ERROR');
    }
  }
}
