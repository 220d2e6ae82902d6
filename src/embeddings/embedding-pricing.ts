import type { Price, Usage } from '../billing/billing.types.ts';
import { ATTO_DIGITS, costNano, formatScaled } from '../billing/money.ts';
import { textPrices, type AttoPrice, type CatalogModel } from '../catalog/model.ts';

/* Embedding prices: the model's `pricing.input` per 1M input tokens, exact in bigint (docs/billing.md). */

const PER_MILLION = 1_000_000n;

interface EmbeddingPrices {
  /** Per 1M input tokens. */
  readonly input: AttoPrice;
  /** USD per token, as the usage line shows it: the price is per 1M tokens, so six more decimal places. */
  readonly perTokenUsd: string;
}

const cache = new WeakMap<CatalogModel, EmbeddingPrices>();

/** The model's prices, parsed once per catalog snapshot (snapshot models are frozen and shared), as chat's are. */
function embeddingPrices(model: CatalogModel): EmbeddingPrices {
  let prices = cache.get(model);
  if (!prices) {
    const input = textPrices(model).input;
    prices = { input, perTokenUsd: formatScaled(input.usd, ATTO_DIGITS + 6) };
    cache.set(model, prices);
  }
  return prices;
}

export function embeddingCost(model: CatalogModel, tokens: number): Price {
  const price = embeddingPrices(model).input;
  return {
    usd: costNano(BigInt(tokens), price.usd, PER_MILLION),
    diem: costNano(BigInt(tokens), price.diem, PER_MILLION),
  };
}

/** The usage record of one embeddings call: one Input line, in tokens. */
export function embeddingUsage(
  model: CatalogModel,
  tokens: number,
  details: { requestId: string; executionTimeMs: number; inputs: number; providerId: string },
): Usage {
  return {
    modelId: model.id,
    modelType: 'EMBEDDING',
    unitType: 'tokens',
    notes: `Embeddings, ${details.inputs} input${details.inputs === 1 ? '' : 's'}`,
    lines: [
      {
        sku: `${model.id}-embedding-input-mtoken`,
        lineType: 'Input',
        units: String(tokens),
        pricePerUnitUsd: embeddingPrices(model).perTokenUsd,
        cost: embeddingCost(model, tokens),
      },
    ],
    inferenceDetails: {
      requestId: details.requestId,
      inferenceExecutionTime: details.executionTimeMs,
      promptTokens: tokens,
    },
    providerId: details.providerId,
  };
}
