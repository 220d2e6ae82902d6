import type { Price, Usage, UsageLine } from '../../billing/billing.types.ts';
import { formatNano, parseNano } from '../../billing/money.ts';
import type { CatalogModel } from '../../catalog/model.ts';
import type { PricePair } from '../../operator-config/schema.ts';

/*
 * Prices of edits and upscales, from the model's catalog pricing (docs/billing.md): an edit costs `inpaint` (or the
 * resolution tier's price when the model lists `resolutions`) plus `inputImages.additional` for each picture beyond
 * `inputImages.included`; an upscale costs `upscale['2x']` up to an effective scale of 2, `upscale['4x']` above it.
 */

const price = (pair: PricePair): Price => ({ usd: parseNano(pair.usd), diem: parseNano(pair.diem) });
const times = (p: Price, n: number): Price => ({ usd: p.usd * BigInt(n), diem: p.diem * BigInt(n) });
const plus = (a: Price, b: Price): Price => ({ usd: a.usd + b.usd, diem: a.diem + b.diem });

interface InpaintPricing {
  inpaint: PricePair;
  resolutions?: Record<string, PricePair>;
  inputImages?: { included: number; additional: PricePair };
}

export interface EditCharge {
  readonly total: Price;
  readonly lines: readonly UsageLine[];
}

/** The price of one edit of `images` pictures at `resolution` (exact; it is also the reservation). */
export function editCharge(model: CatalogModel, resolution: string, images: number): EditCharge {
  const pricing = model.spec.pricing as unknown as InpaintPricing;
  const base = price(pricing.resolutions?.[resolution] ?? pricing.inpaint);
  const lines: UsageLine[] = [
    {
      sku: `${model.id}-inpaint${pricing.resolutions?.[resolution] ? `-${resolution.toLowerCase()}` : ''}`,
      lineType: 'Edit',
      units: '1',
      pricePerUnitUsd: formatNano(base.usd),
      cost: base,
    },
  ];
  const extra = pricing.inputImages ? Math.max(0, images - pricing.inputImages.included) : 0;
  let total = base;
  if (pricing.inputImages && extra > 0) {
    const each = price(pricing.inputImages.additional);
    const cost = times(each, extra);
    lines.push({
      sku: `${model.id}-inpaint-input-image`,
      lineType: 'Input Images',
      units: String(extra),
      pricePerUnitUsd: formatNano(each.usd),
      cost,
    });
    total = plus(total, cost);
  }
  return { total, lines };
}

/** `2x` up to an effective scale of 2, else `4x`; undefined when the model lists no such price. */
export function upscaleCharge(model: CatalogModel, scale: number): EditCharge | undefined {
  const tier = scale <= 2 ? '2x' : '4x';
  const table = (model.spec.pricing as { upscale?: Record<string, PricePair> }).upscale;
  const pair = table?.[tier];
  if (!pair) return undefined;
  const cost = price(pair);
  return {
    total: cost,
    lines: [
      {
        sku: `${model.id}-upscale-${tier}`,
        lineType: `Upscale ${tier}`,
        units: '1',
        pricePerUnitUsd: formatNano(cost.usd),
        cost,
      },
    ],
  };
}

/** The usage record of one edit or upscale: unit type images, model type INPAINT or UPSCALE (analytics: IMAGE). */
export function imageUsage(
  model: CatalogModel,
  charge: EditCharge,
  details: { requestId: string; executionTimeMs: number; notes: string; providerId: string },
): Usage {
  return {
    modelId: model.id,
    modelType: model.type === 'upscale' ? 'UPSCALE' : 'INPAINT',
    unitType: 'images',
    notes: details.notes,
    lines: charge.lines,
    inferenceDetails: { requestId: details.requestId, inferenceExecutionTime: details.executionTimeMs },
    providerId: details.providerId,
  };
}
