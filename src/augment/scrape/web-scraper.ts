import type { Logger } from '../../logger.ts';
import type { WebScrapingConfig } from '../../operator-config/chat-config.ts';
import type { PageText } from '../extract/pool.ts';
import type { PageRequest } from './page-text.ts';
import { AddressPolicy } from './address-policy.ts';
import { PageFetchError, PageFetcher, type FetchedPage } from './page-fetch.ts';
import { linkedUrls } from './page-urls.ts';

const MAX_REDIRECTS = 5;

export interface ScrapedPage {
  /** The URL as the user wrote it (normalised). */
  readonly url: string;
  readonly title: string;
  readonly text: string;
  readonly tokens: number;
  /** The text was cut to the page budget (or the body to the byte limit). */
  readonly truncated: boolean;
  readonly lastModified: string | undefined;
}

/** Media types read as documents or plain text by the extraction worker (which judges the bytes themselves). */
const DOCUMENT_TYPE =
  /^(text\/|application\/(json|xml|pdf|octet-stream|[\w.+-]*\+(json|xml)|vnd\.openxmlformats-officedocument\.))/;
const HTML_TYPE = /^(text\/html|application\/xhtml\+xml)$/;

/**
 * Chat web scraping: the pages a user links in a message, fetched (public addresses only, see PageFetcher) and
 * turned into text in the extraction workers, for the model's context. A page that cannot be had is left out
 * and logged with its host only (URLs may be private to the user); the answer goes on without it.
 */
export class WebScraper {
  private readonly fetcher: PageFetcher;

  constructor(
    private readonly deps: {
      /** The operator config's `chat.webScraping`, defaults filled in (WebScrapingConfigSchema). */
      settings: WebScrapingConfig;
      readPage: (bytes: Uint8Array, page: PageRequest) => Promise<PageText>;
      logger: Logger;
    },
  ) {
    const { settings } = deps;
    this.fetcher = new PageFetcher(new AddressPolicy(settings.allowNetworks), {
      timeoutMs: settings.timeoutMs,
      maxBytes: settings.maxBytes,
      maxRedirects: MAX_REDIRECTS,
    });
  }

  get enabled(): boolean {
    return this.deps.settings.enabled;
  }

  /** The URLs of a message that would be fetched. */
  urlsIn(text: string): string[] {
    return this.enabled ? linkedUrls(text, this.deps.settings.maxPages) : [];
  }

  /** Tokens of text per page: the configured budget, less when `pages` pages would fill over half the context. */
  pageTokens(contextLength: number, pages: number): number {
    return Math.max(1, Math.min(this.deps.settings.maxPageTokens, Math.floor(contextLength / 2 / Math.max(1, pages))));
  }

  /** Every page that could be read, in the order of `urls`; throws only when `signal` aborts. */
  async scrape(
    requestId: string,
    urls: readonly string[],
    maxTokens: number,
    signal?: AbortSignal,
  ): Promise<ScrapedPage[]> {
    const pages = await Promise.all(urls.map((url) => this.scrapeOne(requestId, url, maxTokens, signal)));
    return pages.filter((page): page is ScrapedPage => page !== undefined);
  }

  close(): Promise<void> {
    return this.fetcher.close();
  }

  /**
   * One page for a paid scrape: like the pages of chat web scraping, but a page that cannot be had is an error
   * (PageFetchError, or a refusal of the extraction) for the caller rather than left out.
   */
  async read(
    url: string,
    options: { maxTokens: number; markdown?: boolean; signal?: AbortSignal | undefined },
  ): Promise<ScrapedPage> {
    const fetched = await this.fetcher.fetch(url, options.signal);
    const html = isHtml(fetched);
    if (!html && !DOCUMENT_TYPE.test(fetched.mediaType) && fetched.mediaType !== '')
      throw new PageFetchError(`unsupported media type ${fetched.mediaType}`);
    // A cut-off PDF or DOCX cannot be read; cut-off HTML or text still can.
    if (fetched.truncated && !html && !fetched.mediaType.startsWith('text/'))
      throw new PageFetchError(`larger than ${this.deps.settings.maxBytes} bytes`);
    const page = await this.deps.readPage(fetched.bytes, {
      html,
      charset: fetched.charset,
      maxTokens: options.maxTokens,
      markdown: options.markdown,
    });
    if (page.text.trim() === '') throw new PageFetchError('no text');
    return {
      url,
      title: page.title,
      text: page.text,
      tokens: page.tokens,
      truncated: page.truncated || fetched.truncated,
      lastModified: fetched.lastModified,
    };
  }

  private async scrapeOne(
    requestId: string,
    url: string,
    maxTokens: number,
    signal: AbortSignal | undefined,
  ): Promise<ScrapedPage | undefined> {
    try {
      return await this.read(url, { maxTokens, signal });
    } catch (error) {
      if (signal?.aborted) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      this.deps.logger.warn({ reqId: requestId, host: new URL(url).host, reason }, 'chat web scraping: page left out');
      return undefined;
    }
  }
}

/** HTML by its media type, or by its first bytes when the server named none. */
function isHtml(page: FetchedPage): boolean {
  if (HTML_TYPE.test(page.mediaType)) return true;
  if (page.mediaType !== '') return false;
  const head = new TextDecoder().decode(page.bytes.subarray(0, 512)).trimStart().toLowerCase();
  return head.startsWith('<!doctype html') || head.startsWith('<html');
}
