import { z } from 'zod';
import { parseNetwork } from '../augment/scrape/address-policy.ts';

/* The operator file's `chat` section. */

/** Chat web scraping (`enable_web_scraping`): the pages linked in the last user message, read into the prompt. */
export const WebScrapingConfigSchema = z.strictObject({
  enabled: z.boolean().default(true),
  /** URLs of one message fetched at most; further URLs are ignored. */
  maxPages: z.number().int().min(1).max(10).default(3),
  /** Tokens of text kept per page (also capped so the pages fill at most half the model's context). */
  maxPageTokens: z.number().int().min(100).max(100_000).default(4_000),
  /** Per page, redirects and body included. */
  timeoutMs: z.number().int().min(500).max(60_000).default(10_000),
  /** Body bytes read per page (HTML and text are cut there; larger documents are skipped). */
  maxBytes: z.number().int().min(10_000).max(25_000_000).default(5_000_000),
  /** Non-public networks the scraper may reach (CIDR or address); by default only public addresses are fetched. */
  allowNetworks: z
    .array(
      z.string().refine((text) => {
        try {
          parseNetwork(text);
          return true;
        } catch {
          return false;
        }
      }, 'must be an IP address or a CIDR network (10.0.0.0/8, fd00::/8)'),
    )
    .default([]),
});
export type WebScrapingConfig = z.output<typeof WebScrapingConfigSchema>;
/** Scraping when the operator file has no `chat.webScraping` section. */
export const DEFAULT_WEB_SCRAPING: WebScrapingConfig = WebScrapingConfigSchema.parse({});

export const ChatConfigSchema = z.strictObject({
  systemPrompt: z.string().trim().min(1).optional(),
  webScraping: WebScrapingConfigSchema.optional(),
});
export type ChatConfig = z.output<typeof ChatConfigSchema>;
