import type { LimitedModel } from './limits.ts';

/**
 * Paid routes without a catalog model, limited like models under the id their usage entries carry
 * (src/augment/pricing.ts, src/media/images/background-removal.service.ts). GET /api_keys/rate_limits lists them
 * after the catalog's models.
 */
export const PRODUCTS = {
  webSearch: { id: 'augment-web-search', type: 'augment' },
  webScrape: { id: 'augment-web-scrape', type: 'augment' },
  textParser: { id: 'augment-text-parser', type: 'augment' },
  backgroundRemoval: { id: 'background-remove', type: 'image' },
} as const satisfies Record<string, LimitedModel>;

export const PRODUCT_LIST: readonly LimitedModel[] = Object.values(PRODUCTS);
