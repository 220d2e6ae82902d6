import type { Price, Usage } from '../../billing/billing.types.ts';
import { ATTO_DIGITS, costNano, formatScaled } from '../../billing/money.ts';
import { attoPrice, type AttoPrice, type CatalogModel } from '../../catalog/model.ts';
import type { TtsPricing } from '../../operator-config/schema.ts';

/*
 * Speech prices: `pricing.input` per 1M characters of input (Unicode code points), exact in bigint; a cloned voice at
 * `pricing.voice_clone` per voice (docs/billing.md).
 */

const PER_MILLION = 1_000_000n;

/** The characters a text is billed for: code points, so an emoji or a CJK character counts once. */
export const billedCharacters = (text: string): number => {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
};

const inputPrice = (model: CatalogModel): AttoPrice => attoPrice((model.spec.pricing as TtsPricing).input);

/** The cost of `characters` with this model (the hold and the charge are the same: the length is known up front). */
export function speechCost(model: CatalogModel, characters: number): Price {
  const price = inputPrice(model);
  return {
    usd: costNano(BigInt(characters), price.usd, PER_MILLION),
    diem: costNano(BigInt(characters), price.diem, PER_MILLION),
  };
}

/** The usage record of one synthesis: one Input line, in characters. */
export function speechUsage(
  model: CatalogModel,
  characters: number,
  details: { requestId: string; executionTimeMs: number; notes: string; providerId: string },
): Usage {
  return {
    modelId: model.id,
    modelType: 'TTS',
    unitType: 'chars',
    notes: details.notes,
    lines: [
      {
        sku: `${model.id}-tts-input-mchars`,
        lineType: 'Input',
        units: String(characters),
        // USD per character: the price is per 1M characters, so six more decimal places.
        pricePerUnitUsd: formatScaled(inputPrice(model).usd, ATTO_DIGITS + 6),
        cost: speechCost(model, characters),
      },
    ],
    inferenceDetails: { requestId: details.requestId, inferenceExecutionTime: details.executionTimeMs },
    providerId: details.providerId,
  };
}

/** The price of one cloned voice with this model; undefined when the model's pricing names none (free). */
export function voiceClonePrice(model: CatalogModel): { price: Price; usd: string } | undefined {
  const pair = (model.spec.pricing as TtsPricing).voice_clone;
  if (!pair) return undefined;
  const atto = attoPrice(pair);
  const price = { usd: costNano(1n, atto.usd), diem: costNano(1n, atto.diem) };
  if (price.usd === 0n && price.diem === 0n) return undefined;
  return { price, usd: formatScaled(atto.usd, ATTO_DIGITS) };
}

/** The usage record of one cloned voice. */
export function voiceCloneUsage(
  model: CatalogModel,
  clone: { price: Price; usd: string },
  details: { requestId: string; executionTimeMs: number; voice: string },
): Usage {
  return {
    modelId: model.id,
    modelType: 'TTS',
    unitType: 'requests',
    notes: `Voice clone ${details.voice}`,
    lines: [
      {
        sku: `${model.id}-tts-voice-clone`,
        lineType: 'Voice Clone',
        units: '1',
        pricePerUnitUsd: clone.usd,
        cost: clone.price,
      },
    ],
    inferenceDetails: { requestId: details.requestId, inferenceExecutionTime: details.executionTimeMs },
  };
}
