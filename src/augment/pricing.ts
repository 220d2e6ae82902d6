import type { Price, Usage } from '../billing/billing.types.ts';
import { parseNano } from '../billing/money.ts';

/** Augment helpers cost 0.01 USD per successful request (docs/billing.md); DIEM pays the same. */
export const AUGMENT_PRICE_USD = '0.01';
export const AUGMENT_PRICE: Price = { usd: parseNano(AUGMENT_PRICE_USD), diem: parseNano(AUGMENT_PRICE_USD) };

/** The usage record of one augment request: one line of one request at the fixed price. The sku doubles as the
 * model id, so analytics show the text parser and web search as two products rather than one "AUGMENT". */
export function augmentUsage(
  sku: 'augment-text-parser' | 'augment-web-search' | 'augment-web-scrape',
  notes: string,
  details: { requestId: string; executionTimeMs: number; providerId?: string },
): Usage {
  return {
    modelId: sku,
    ...(details.providerId === undefined ? {} : { providerId: details.providerId }),
    modelType: 'AUGMENT',
    unitType: 'requests',
    notes,
    lines: [{ sku, lineType: 'Request', units: '1', pricePerUnitUsd: AUGMENT_PRICE_USD, cost: AUGMENT_PRICE }],
    inferenceDetails: { requestId: details.requestId, inferenceExecutionTime: details.executionTimeMs },
  };
}
