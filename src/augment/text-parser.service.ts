import { availableParallelism } from 'node:os';
import { z } from 'zod';
import type { AuthContext } from '../auth/auth-context.ts';
import { requireAccount } from '../auth/permissions.ts';
import type { BillingService } from '../billing/billing.service.ts';
import type { SettledCharge } from '../billing/billing.types.ts';
import { PayloadTooLargeError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { PRODUCTS } from '../rate-limits/products.ts';
import type { RateLimiter } from '../rate-limits/rate-limiter.ts';
import { parseInput } from '../validation.ts';
import { detectDocument, type DocumentKind } from './extract/detect.ts';
import type { ExtractLimits } from './extract/extract.ts';
import { ExtractionPool, type PageText, type PoolOptions } from './extract/pool.ts';
import type { PageRequest } from './scrape/page-text.ts';
import { DEFAULT_ZIP_LIMITS } from './extract/zip.ts';
import { AUGMENT_PRICE, augmentUsage } from './pricing.ts';

/** The text parser's file limit, 25 MB (docs/api.md), in bytes. */
export const TEXT_PARSER_MAX_FILE_BYTES = 25_000_000;

export const RESPONSE_FORMATS = ['json', 'text'] as const;
export type ResponseFormat = (typeof RESPONSE_FORMATS)[number];

export const TextParserInput = z.object({
  response_format: z
    .enum(RESPONSE_FORMATS)
    .default('json')
    .describe('`json` (default): {"text", "tokens"}; `text`: the text alone as text/plain'),
});

export interface ParseDocumentRequest {
  readonly bytes: Uint8Array;
  /** Informational only: the type is always judged from the bytes. */
  readonly filename?: string;
  readonly contentType?: string;
  readonly format?: string;
}

export interface ParsedDocument {
  readonly text: string;
  /** Tokens of `text` in OpenAI's o200k_base encoding (gpt-tokenizer). */
  readonly tokens: number;
  readonly kind: DocumentKind;
  readonly format: ResponseFormat;
  readonly charge: SettledCharge;
}

export interface TextParserOptions extends PoolOptions {
  readonly maxFileBytes: number;
  readonly limits: ExtractLimits;
}

export const DEFAULT_TEXT_PARSER_OPTIONS: TextParserOptions = {
  maxFileBytes: TEXT_PARSER_MAX_FILE_BYTES,
  limits: { zip: DEFAULT_ZIP_LIMITS, maxTextChars: 32_000_000 },
  size: availableParallelism(),
  perAccount: 2,
  timeoutMs: 10_000,
  queueTimeoutMs: 10_000,
  maxHeapMb: 1024,
  idleMs: 60_000,
};

/**
 * Document text extraction (augment text parser): PDF, DOCX, PPTX, XLSX and plain text, in memory, in worker
 * threads. Charges 0.01 USD per successful parse through the billing core; a refused document costs nothing.
 */
export class TextParserService {
  private readonly options: TextParserOptions;
  private readonly pool: ExtractionPool;

  constructor(
    private readonly deps: {
      billing: BillingService;
      logger: Logger;
      options?: Partial<TextParserOptions>;
      rateLimiter?: RateLimiter | undefined;
    },
  ) {
    this.options = { ...DEFAULT_TEXT_PARSER_OPTIONS, ...deps.options };
    this.pool = new ExtractionPool(this.options, deps.logger);
  }

  get maxFileBytes(): number {
    return this.options.maxFileBytes;
  }

  async parse(auth: AuthContext, input: ParseDocumentRequest): Promise<ParsedDocument> {
    const account = requireAccount(auth);
    const { response_format: format } = parseInput(TextParserInput, { response_format: input.format });
    if (input.bytes.byteLength > this.options.maxFileBytes) throw new PayloadTooLargeError(this.options.maxFileBytes);
    // Cheap checks from the bytes (empty, unknown type, damaged ZIP directory) refuse before any money is held.
    detectDocument(input.bytes, this.options.limits.zip);
    await this.deps.rateLimiter?.admit(account, PRODUCTS.textParser); // before the hold: a 429 is never charged
    const started = performance.now();
    const { result, charge } = await this.deps.billing.runMetered(account, {
      maxCost: AUGMENT_PRICE,
      run: () => this.pool.run({ bytes: input.bytes, limits: this.options.limits }, account.accountId),
      usage: (parsed) =>
        augmentUsage('augment-text-parser', `${parsed.kind.toUpperCase()} document, ${parsed.tokens} tokens`, {
          requestId: auth.requestId,
          executionTimeMs: Math.round(performance.now() - started),
        }),
    });
    return { text: result.text, tokens: result.tokens, kind: result.kind, format, charge };
  }

  /**
   * A document's text for another paid call (a file part of a chat message), under the same size limit and checks
   * as {@link parse}, in the same worker threads; nothing is charged or rate-limited here (the caller prices it).
   */
  async extract(accountId: string, bytes: Uint8Array): Promise<{ text: string; tokens: number; kind: DocumentKind }> {
    if (bytes.byteLength > this.options.maxFileBytes) throw new PayloadTooLargeError(this.options.maxFileBytes);
    detectDocument(bytes, this.options.limits.zip);
    const result = await this.pool.run({ bytes, limits: this.options.limits }, accountId);
    return { text: result.text, tokens: result.tokens, kind: result.kind };
  }

  /**
   * A fetched web page's text for another paid call (chat web scraping), in the same worker threads and under the
   * same limits as documents; nothing is charged here. Refusals are ValidationErrors, as for {@link parse}.
   */
  readPage(bytes: Uint8Array, page: PageRequest): Promise<PageText> {
    return this.pool.runPage({ bytes, limits: this.options.limits, page });
  }

  /** Stops the worker threads. */
  close(): Promise<void> {
    return this.pool.close();
  }
}
