import type { z } from 'zod';
import type { Price, Usage } from '../../billing/billing.types.ts';
import { ATTO_DIGITS, costNano, formatScaled, parseAtto, type Atto } from '../../billing/money.ts';
import { attoPrice, type AttoPrice, type CatalogModel } from '../../catalog/model.ts';
import type { MusicPricingSchema, PricePair, VideoPricingSchema } from '../../operator-config/schema.ts';
import type { AudioJobRequest } from '../../providers/jobs/job-engine.ts';
import { audioCharacters, fieldError, type AudioQuote } from './audio-rules.ts';
import type { VideoPriceBasis } from './video-rules.ts';

/*
 * Job prices (docs/billing.md, Queued jobs), exact in bigint: one function per kind serves the quote route, the
 * hold at queue time and the charge at completion, so the three always agree.
 *
 * Music, one of: `generation` per track; `per_second` × the track's seconds; `durations` tiers keyed by seconds,
 * the tier whose min_seconds–max_seconds holds the length; `per_thousand_characters` of prompt + lyrics.
 * Video, one of: `per_second` × seconds; `generation` per clip; `durations` table keyed by the request's
 * `duration` ("5s"); then × `resolution_multipliers[resolution]` (absent: 1) × `audio_multiplier` when the clip
 * has sound (absent: 1). Multipliers are exact decimals: the product is rounded up to a nano-unit once, at the end.
 */

type MusicPricing = z.output<typeof MusicPricingSchema>;
type VideoPricing = z.output<typeof VideoPricingSchema>;

const ONE: Atto = 10n ** BigInt(ATTO_DIGITS);
const THOUSAND = 1_000n;

const perUnits = (units: number, price: AttoPrice, block = 1n): Price => ({
  usd: costNano(BigInt(units), price.usd, block),
  diem: costNano(BigInt(units), price.diem, block),
});

const own = <T>(table: Readonly<Record<string, T>> | undefined, key: string | undefined): T | undefined =>
  table !== undefined && key !== undefined && Object.hasOwn(table, key) ? table[key] : undefined;

/** The tier of a `durations` music price that holds `seconds` (tiers are tried shortest key first). */
export function musicTier(pricing: MusicPricing, seconds: number): PricePair | undefined {
  const tiers = Object.entries(pricing.durations ?? {}).sort(([a], [b]) => Number(a) - Number(b));
  return tiers.find(([, tier]) => tier.min_seconds <= seconds && seconds <= tier.max_seconds)?.[1];
}

/** The price of a music job, or of a quote for one. */
export function quoteAudio(model: CatalogModel, parsed: AudioJobRequest | AudioQuote): Price {
  const pricing = model.spec.pricing as MusicPricing;
  const seconds = parsed.durationSeconds;
  if (pricing.generation) return perUnits(1, attoPrice(pricing.generation));
  if (pricing.per_second) return perUnits(seconds, attoPrice(pricing.per_second));
  if (pricing.per_thousand_characters) {
    const characters = parsed.kind === 'audio' ? audioCharacters(parsed) : parsed.characters;
    return perUnits(characters, attoPrice(pricing.per_thousand_characters), THOUSAND);
  }
  if (pricing.durations) {
    const tier = musicTier(pricing, seconds);
    if (!tier) throw fieldError('duration_seconds', `no price tier of this model covers ${seconds} seconds`);
    return perUnits(1, attoPrice(tier));
  }
  // The config schema requires exactly one of the four; a model without any cannot be priced.
  throw new Error(`Music model ${model.id} has no price`);
}

const multiplier = (value: number | undefined): Atto => (value === undefined ? ONE : parseAtto(value));

interface VideoPriceParts {
  readonly base: AttoPrice;
  readonly units: bigint;
  /** resolution × audio multipliers, at 10^-36 scale. */
  readonly factor: bigint;
  readonly perSecond: boolean;
}

function videoPriceParts(model: CatalogModel, parsed: VideoPriceBasis): VideoPriceParts {
  const pricing = model.spec.pricing as VideoPricing;
  let base: AttoPrice;
  let units = 1n;
  if (pricing.per_second) {
    base = attoPrice(pricing.per_second);
    units = BigInt(parsed.durationSeconds);
  } else if (pricing.generation) {
    base = attoPrice(pricing.generation);
  } else {
    const key = parsed.duration ?? `${parsed.durationSeconds}s`;
    const pair = own(pricing.durations, key);
    if (!pair) throw fieldError('duration', `this model has no price for ${key}`);
    base = attoPrice(pair);
  }
  const factor =
    multiplier(own(pricing.resolution_multipliers, parsed.resolution)) *
    (parsed.audio ? multiplier(pricing.audio_multiplier) : ONE);
  return { base, units, factor, perSecond: pricing.per_second !== undefined };
}

/** The price of a video job (its request, or a quote body's basis). */
export function quoteVideo(model: CatalogModel, parsed: VideoPriceBasis): Price {
  const { base, units, factor } = videoPriceParts(model, parsed);
  // base × units × factor is at 10^-18 · 10^-36 scale: one rounding up to the nano-unit.
  const cost = (price: Atto) => costNano(units * factor, price, ONE * ONE);
  return { usd: cost(base.usd), diem: cost(base.diem) };
}

export interface JobUsageDetails {
  readonly requestId: string;
  readonly executionTimeMs: number;
  readonly notes: string;
}

/** The usage entry of a completed music job: one line, its cost exactly the quote. */
export function audioUsage(model: CatalogModel, request: AudioJobRequest, details: JobUsageDetails): Usage {
  const pricing = model.spec.pricing as MusicPricing;
  const shape = pricing.per_second
    ? { unitType: 'seconds', units: request.durationSeconds, pair: pricing.per_second, digits: ATTO_DIGITS }
    : pricing.per_thousand_characters
      ? {
          unitType: 'chars',
          units: audioCharacters(request),
          pair: pricing.per_thousand_characters,
          digits: ATTO_DIGITS + 3,
        }
      : {
          unitType: 'requests',
          units: 1,
          pair: pricing.generation ?? musicTier(pricing, request.durationSeconds),
          digits: ATTO_DIGITS,
        };
  const perUnit = shape.pair ? attoPrice(shape.pair).usd : 0n;
  return {
    modelId: model.id,
    modelType: 'MUSIC',
    unitType: shape.unitType,
    notes: details.notes,
    lines: [
      {
        sku: `${model.id}-music-${shape.unitType === 'requests' ? 'track' : shape.unitType}`,
        lineType: 'Generation',
        units: String(shape.units),
        // Per character: the price is per 1,000 characters, so three more decimal places.
        pricePerUnitUsd: formatScaled(perUnit, shape.digits),
        cost: quoteAudio(model, request),
      },
    ],
    inferenceDetails: { requestId: details.requestId, inferenceExecutionTime: details.executionTimeMs },
  };
}

/** The usage entry of a completed video job: one line (seconds or clips), multipliers folded into the unit price. */
export function videoUsage(model: CatalogModel, request: VideoPriceBasis, details: JobUsageDetails): Usage {
  const { base, units, factor, perSecond } = videoPriceParts(model, request);
  return {
    modelId: model.id,
    modelType: 'VIDEO',
    unitType: perSecond ? 'seconds' : 'requests',
    notes: details.notes,
    lines: [
      {
        sku: `${model.id}-video-${(request.resolution ?? 'default').toLowerCase()}${request.audio ? '-audio' : ''}`,
        lineType: 'Generation',
        units: String(units),
        pricePerUnitUsd: formatScaled(base.usd * factor, ATTO_DIGITS + 2 * ATTO_DIGITS),
        cost: quoteVideo(model, request),
      },
    ],
    inferenceDetails: { requestId: details.requestId, inferenceExecutionTime: details.executionTimeMs },
  };
}
