import { z } from 'zod';
import { EXACT_DECIMAL_MESSAGE, exactDecimal } from './primitives.ts';

/*
 * Pricing of the operator config file's models, per model type. Keys are written exactly as the wire `model_spec`
 * shows them; every amount is a plain decimal read exactly later (money is never computed with floats).
 */

/** A price or multiplier: a plain decimal number, exact to 18 places (money is never computed with floats). */
const Decimal = z.number().nonnegative().refine(exactDecimal, EXACT_DECIMAL_MESSAGE);

const pricePairShape = { usd: Decimal, diem: Decimal.optional() };
const withDiem = <T extends { usd: number; diem?: number | undefined }>(pair: T) => ({
  ...pair,
  diem: pair.diem ?? pair.usd,
});
/** `{ usd, diem }`; `diem` defaults to `usd`. */
export const PricePairSchema = z.strictObject(pricePairShape).transform(withDiem);
export type PricePair = z.output<typeof PricePairSchema>;
const PriceTable = z.record(z.string().min(1), PricePairSchema);

const tokenPrices = {
  input: PricePairSchema,
  output: PricePairSchema,
  cache_input: PricePairSchema.optional(),
  cache_write: PricePairSchema.optional(),
};
/** Text and embedding: per 1M tokens; `extended` prices apply above `context_token_threshold` prompt tokens. */
export const TextPricingSchema = z.strictObject({
  ...tokenPrices,
  extended: z.strictObject({ context_token_threshold: z.number().int().positive(), ...tokenPrices }).optional(),
});
export type TextPricing = z.output<typeof TextPricingSchema>;

/** Image: per image (`generation`, or `resolutions` tiers), optional `quality` tiers per resolution and `upscale`. */
export const ImagePricingSchema = z
  .strictObject({
    generation: PricePairSchema.optional(),
    resolutions: PriceTable.optional(),
    quality: z.record(z.string().min(1), PriceTable).optional(),
    upscale: PriceTable.optional(),
  })
  .refine((p) => p.generation !== undefined || p.resolutions !== undefined, 'set generation or resolutions');

export const UpscalePricingSchema = z.strictObject({ generation: PricePairSchema.optional(), upscale: PriceTable });
export const InpaintPricingSchema = z.strictObject({
  inpaint: PricePairSchema,
  inputImages: z.strictObject({ included: z.number().int().nonnegative(), additional: PricePairSchema }).optional(),
  resolutions: PriceTable.optional(),
  quality: z.record(z.string().min(1), PriceTable).optional(),
});
/** Speech: `input` per 1M characters; `voice_clone` per cloned voice (POST /audio/voices; none: cloning is free). */
export const TtsPricingSchema = z.strictObject({ input: PricePairSchema, voice_clone: PricePairSchema.optional() });
export type TtsPricing = z.output<typeof TtsPricingSchema>;
export const AsrPricingSchema = z.strictObject({ per_audio_second: PricePairSchema });
export type AsrPricing = z.output<typeof AsrPricingSchema>;

const DurationTier = z
  .strictObject({
    ...pricePairShape,
    min_seconds: z.number().int().nonnegative(),
    max_seconds: z.number().int().positive(),
  })
  .transform(withDiem)
  .refine((t) => t.min_seconds <= t.max_seconds, 'min_seconds must not exceed max_seconds');

const exactlyOne =
  (keys: readonly string[]) =>
  (value: Record<string, unknown>, ctx: z.RefinementCtx): void => {
    const present = keys.filter((key) => value[key] !== undefined);
    if (present.length !== 1)
      ctx.addIssue({ code: 'custom', message: `set exactly one of ${keys.join(', ')} (found ${present.length})` });
  };

/** Music: one of `durations` (tiers keyed by seconds), `generation`, `per_second`, `per_thousand_characters`. */
export const MusicPricingSchema = z
  .strictObject({
    durations: z.record(z.string().regex(/^\d+$/, 'duration keys are whole seconds'), DurationTier).optional(),
    generation: PricePairSchema.optional(),
    per_second: PricePairSchema.optional(),
    per_thousand_characters: PricePairSchema.optional(),
  })
  .superRefine(exactlyOne(['durations', 'generation', 'per_second', 'per_thousand_characters']));

/** Video: a per-model rule (`per_second`, `generation` or `durations`), times optional resolution and audio multipliers. */
export const VideoPricingSchema = z
  .strictObject({
    per_second: PricePairSchema.optional(),
    generation: PricePairSchema.optional(),
    durations: PriceTable.optional(),
    resolution_multipliers: z.record(z.string().min(1), Decimal).optional(),
    audio_multiplier: Decimal.optional(),
  })
  .superRefine(exactlyOne(['per_second', 'generation', 'durations']));
