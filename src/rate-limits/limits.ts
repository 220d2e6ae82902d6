import { z } from 'zod';
import { MODEL_TYPES } from '../catalog/model-types.ts';

/*
 * Per-key rate limits by model: requests per minute (RPM), requests per day (RPD: a 24-hour window opened by the
 * key's first request to the model) and tokens per minute (TPM, text and embedding models). The operator
 * file's `rateLimits` section sets defaults per model type, limits per model tier (named groups of models, such
 * as small / medium / large) and overrides per model; a key's own override (api_keys.rate_limits, set by
 * `keys rate-limits`) beats them all.
 */

/**
 * What limits are looked up by besides the model id: the catalog's model types, and `augment` for the paid helper
 * routes that have no catalog model (web search, scrape, text parser; see products.ts).
 */
export const RATE_LIMIT_KINDS = [...MODEL_TYPES, 'augment'] as const;
export type RateLimitKind = (typeof RATE_LIMIT_KINDS)[number];

/** What a limited call is counted against: a model's (or product's) id and its kind (which picks the defaults). */
export interface LimitedModel {
  readonly id: string;
  readonly type: RateLimitKind;
}

export const RATE_LIMIT_TYPES = ['RPM', 'RPD', 'TPM'] as const;
export type RateLimitType = (typeof RATE_LIMIT_TYPES)[number];

/** The tier every key is limited by (the original service's `paid` tier; Lagoon has one). */
export const RATE_LIMIT_TIER = 'paid';

const Amount = z.number().int().positive().max(1_000_000_000_000);

/** Some of rpm, rpd, tpm; a missing one is taken from the next level (model, tier, type, then built-in). */
export const RateLimitValuesSchema = z.strictObject({
  rpm: Amount.optional(),
  rpd: Amount.optional(),
  tpm: Amount.optional(),
});
export type RateLimitValues = z.output<typeof RateLimitValuesSchema>;

/** A model tier: the models in it (ids as the catalog or products.ts name them) and their limits. */
export const RateLimitTierSchema = RateLimitValuesSchema.extend({
  models: z.array(z.string().min(1)).min(1),
});

export const RateLimitsConfigSchema = z
  .strictObject({
    /** By model type (text, image, tts, …, and augment). */
    defaults: z.partialRecord(z.enum(RATE_LIMIT_KINDS), RateLimitValuesSchema).default({}),
    /** By tier name: each model in at most one tier. */
    tiers: z
      .record(z.string().regex(/^[A-Za-z0-9_.-]+$/, 'Letters, digits, dot, dash or underscore'), RateLimitTierSchema)
      .default({}),
    /** By model id. */
    models: z.record(z.string().min(1), RateLimitValuesSchema).default({}),
    /** Breaches kept per account for GET /api_keys/rate_limits/log (older ones are pruned). */
    logRetention: z.number().int().min(50).max(100_000).default(500),
  })
  .superRefine((config, ctx) => {
    const seen = new Map<string, string>();
    for (const [tier, { models }] of Object.entries(config.tiers))
      models.forEach((model, index) => {
        const other = seen.get(model);
        if (other !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: ['tiers', tier, 'models', index],
            message: `${model} is already in tier ${other}: a model belongs to one tier`,
          });
        seen.set(model, tier);
      });
  });
export type RateLimitsConfig = z.output<typeof RateLimitsConfigSchema>;
/** Rate limits when the operator file has no `rateLimits` section. */
export const DEFAULT_RATE_LIMITS: RateLimitsConfig = RateLimitsConfigSchema.parse({});

/** Effective limits of one key on one model; tpm is null for models not billed by tokens. */
export interface EffectiveLimits {
  readonly rpm: number;
  readonly rpd: number;
  readonly tpm: number | null;
}

/**
 * Built-in limits: generous, so a single busy key (a load test at 2,000 requests/s) is not throttled unless the
 * operator asks for it. Media types are lower because each call is heavy.
 */
const TEXT = { rpm: 200_000, rpd: 50_000_000, tpm: 2_000_000_000 };
const MEDIA = { rpm: 20_000, rpd: 5_000_000 };
export const BUILT_IN_LIMITS: Readonly<
  Record<RateLimitKind, Required<RateLimitValues> | Omit<RateLimitValues, 'tpm'>>
> = {
  text: TEXT,
  embedding: TEXT,
  image: MEDIA,
  upscale: MEDIA,
  inpaint: MEDIA,
  tts: MEDIA,
  asr: MEDIA,
  music: MEDIA,
  video: MEDIA,
  augment: MEDIA,
};

/** Whether TPM applies to a model type (the ones billed per token). */
const tokenMetered = (type: RateLimitKind): boolean => type === 'text' || type === 'embedding';

/** Model id → its tier's limits, built once per parsed config (a lookup per admitted call, not a scan). */
const tierIndexes = new WeakMap<RateLimitsConfig, ReadonlyMap<string, RateLimitValues>>();

/** The limits of the tier `modelId` is in, if any. */
export function tierLimitsOf(config: RateLimitsConfig, modelId: string): RateLimitValues | undefined {
  let index = tierIndexes.get(config);
  if (!index) {
    const built = new Map<string, RateLimitValues>();
    for (const { models, ...limits } of Object.values(config.tiers)) for (const id of models) built.set(id, limits);
    tierIndexes.set(config, built);
    index = built;
  }
  return index.get(modelId);
}

/**
 * The limits for `model`, each value from the first level that sets it: the key's override, the model's, its
 * tier's, its type's, the built-in ones.
 */
export function effectiveLimits(
  config: RateLimitsConfig,
  model: LimitedModel,
  keyOverride: RateLimitValues | null,
): EffectiveLimits {
  const builtIn: RateLimitValues = BUILT_IN_LIMITS[model.type];
  const layers = [
    keyOverride ?? {},
    config.models[model.id] ?? {},
    tierLimitsOf(config, model.id) ?? {},
    config.defaults[model.type] ?? {},
    builtIn,
  ];
  const pick = (field: keyof RateLimitValues): number | undefined =>
    layers.map((layer) => layer[field]).find((value) => value !== undefined);
  return {
    rpm: pick('rpm') ?? TEXT.rpm,
    rpd: pick('rpd') ?? TEXT.rpd,
    tpm: tokenMetered(model.type) ? (pick('tpm') ?? TEXT.tpm) : null,
  };
}
