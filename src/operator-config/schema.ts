import { z } from 'zod';
import { MODEL_PRIVACY, MODEL_TYPES } from '../catalog/model-types.ts';
import { ProviderId } from './primitives.ts';
import {
  AsrPricingSchema,
  ImagePricingSchema,
  InpaintPricingSchema,
  MusicPricingSchema,
  TextPricingSchema,
  TtsPricingSchema,
  UpscalePricingSchema,
  VideoPricingSchema,
} from './pricing-schema.ts';
import {
  ImageConstraints,
  InpaintConstraints,
  OtherConstraints,
  PositiveInt,
  SpecExtrasSchema,
  TextConstraints,
  VideoConstraints,
} from './model-spec-schema.ts';
import { ChatConfigSchema, type ChatConfig } from './chat-config.ts';
import { QueueApiOptionsSchema } from './queue-api-options.ts';
import { RpcConfigSchema, type RpcConfig } from './rpc-config.ts';
import { RateLimitsConfigSchema, type RateLimitsConfig } from '../rate-limits/limits.ts';

export {
  AsrPricingSchema,
  ImagePricingSchema,
  InpaintPricingSchema,
  MusicPricingSchema,
  PricePairSchema,
  TextPricingSchema,
  TtsPricingSchema,
  UpscalePricingSchema,
  VideoPricingSchema,
  type AsrPricing,
  type PricePair,
  type TextPricing,
  type TtsPricing,
} from './pricing-schema.ts';
/*
 * The operator config file (YAML or JSON): providers, models, compatibility mappings and characters. Field
 * names are camelCase; pricing and spec keys are written exactly as the wire `model_spec` shows them.
 */

export const PROVIDER_TYPES = [
  'simulator',
  'openai-compatible',
  'automatic1111',
  'queue',
  'searxng',
  'brave',
  'json-rpc',
] as const;
export type ProviderType = (typeof PROVIDER_TYPES)[number];
/** Provider types that need no base URL (built in, or a well-known public endpoint). */
const BASE_URL_OPTIONAL: readonly ProviderType[] = ['simulator', 'brave'];

// No ':' in names: chat accepts `<model>:<key>=<value>` suffixes.
const ModelId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$/, 'Use letters, digits, ".", "_", "/" and "-" (no ":" or spaces)');
const Trait = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, 'Use letters, digits, "_" and "-"');
const Slug = z.string().regex(/^[a-z0-9][a-z0-9-]{0,99}$/, 'Use lowercase letters, digits and "-"');
const ModelTypeSchema = z.enum(MODEL_TYPES);

export const CapabilitiesSchema = z.strictObject({
  optimizedForCode: z.boolean().optional(),
  quantization: z.string().min(1).optional(),
  supportsAudioInput: z.boolean().optional(),
  supportsFunctionCalling: z.boolean().optional(),
  supportsLogProbs: z.boolean().optional(),
  supportsMultipleImages: z.boolean().optional(),
  maxImages: z.number().int().positive().optional(),
  supportsReasoning: z.boolean().optional(),
  supportsReasoningEffort: z.boolean().optional(),
  reasoningEffortOptions: z.array(z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'])).optional(),
  defaultReasoningEffort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']).optional(),
  supportsResponseSchema: z.boolean().optional(),
  supportsTeeAttestation: z.boolean().optional(),
  supportsE2EE: z.boolean().optional(),
  supportsVideoInput: z.boolean().optional(),
  maxVideos: z.number().int().positive().optional(),
  supportsVision: z.boolean().optional(),
  supportsWebSearch: z.boolean().optional(),
  supportsXSearch: z.boolean().optional(),
});
export type ModelCapabilities = z.output<typeof CapabilitiesSchema>;

/** Unix seconds, or an ISO date / date-time. */
const CreatedInput = z.union([z.number().int().nonnegative(), z.iso.date(), z.iso.datetime({ offset: true })]);
const Created = CreatedInput.transform((value) =>
  typeof value === 'number' ? new Date(value * 1000) : new Date(value),
);

const ProviderRef = z.union([
  ProviderId,
  z.strictObject({ id: ProviderId, upstreamModel: z.string().min(1).optional() }),
]);

const modelBase = {
  id: ModelId,
  name: z.string().min(1).max(200),
  description: z.string().optional(),
  modelSource: z.url().optional(),
  /** The record's `owned_by`; default: the primary provider's `ownedBy`, else `lagoon` (load.ts). */
  ownedBy: z.string().min(1).optional(),
  created: Created.optional(),
  privacy: z.enum(MODEL_PRIVACY).default('private'),
  offline: z.boolean().default(false),
  traits: z
    .array(Trait)
    .refine((traits) => new Set(traits).size === traits.length, 'traits must be unique')
    .default([]),
  constraints: OtherConstraints.optional(),
  spec: SpecExtrasSchema.optional(),
  /** One provider id, or `providers` in fallback order (ids or `{ id, upstreamModel }`). */
  provider: ProviderId.optional(),
  providers: z.array(ProviderRef).min(1).optional(),
  /** The model name sent upstream; defaults to `id`. */
  upstreamModel: z.string().min(1).optional(),
  disabled: z.literal(false).optional(),
};

const oneProvider = (
  model: { provider?: string | undefined; providers?: unknown[] | undefined },
  ctx: z.RefinementCtx,
): void => {
  if ((model.provider === undefined) === (model.providers === undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: ['provider'],
      message: 'set either provider (one id) or providers (ids in fallback order)',
    });
  }
};

const model = <T extends z.ZodObject>(schema: T) => schema.superRefine(oneProvider);
const ContextLength = PositiveInt.optional();

export const ModelConfigSchema = z.discriminatedUnion('type', [
  model(
    z.strictObject({
      ...modelBase,
      type: z.literal('text'),
      contextLength: PositiveInt.default(32_768),
      capabilities: CapabilitiesSchema.optional(),
      constraints: TextConstraints.optional(),
      pricing: TextPricingSchema,
    }),
  ),
  model(
    z.strictObject({
      ...modelBase,
      type: z.literal('embedding'),
      contextLength: ContextLength,
      pricing: TextPricingSchema,
    }),
  ),
  model(
    z.strictObject({
      ...modelBase,
      type: z.literal('image'),
      constraints: ImageConstraints.optional(),
      /**
       * The small "Lagoon" mark on generated pictures (a caller's `hide_watermark: true` always removes it).
       * Default: on for simulated pictures, off for real engines' (docs/configuration.md, Image engines).
       */
      watermark: z.boolean().optional(),
      pricing: ImagePricingSchema,
    }),
  ),
  model(z.strictObject({ ...modelBase, type: z.literal('upscale'), pricing: UpscalePricingSchema })),
  model(
    z.strictObject({
      ...modelBase,
      type: z.literal('inpaint'),
      constraints: InpaintConstraints.optional(),
      pricing: InpaintPricingSchema,
    }),
  ),
  model(z.strictObject({ ...modelBase, type: z.literal('tts'), pricing: TtsPricingSchema })),
  model(z.strictObject({ ...modelBase, type: z.literal('asr'), pricing: AsrPricingSchema })),
  model(z.strictObject({ ...modelBase, type: z.literal('music'), pricing: MusicPricingSchema })),
  model(
    z.strictObject({
      ...modelBase,
      type: z.literal('video'),
      constraints: VideoConstraints.optional(),
      pricing: VideoPricingSchema,
    }),
  ),
]);
export type ModelConfig = z.output<typeof ModelConfigSchema>;
export type ModelConfigInput = z.input<typeof ModelConfigSchema>;

/**
 * A model listed under its own id that runs on another model's engine (`aliasOf`): it inherits the target's
 * providers, type and record, and any record field set here overrides the inherited one (model-aliases.ts).
 * Per-type fields are checked once merged with the target, against the target's type.
 */
export const ModelAliasSchema = z.strictObject({
  id: ModelId,
  aliasOf: ModelId,
  /** Optional; when set it must be the target's type. */
  type: ModelTypeSchema.optional(),
  name: modelBase.name.optional(),
  description: modelBase.description,
  modelSource: modelBase.modelSource,
  ownedBy: modelBase.ownedBy,
  created: CreatedInput.optional(),
  privacy: z.enum(MODEL_PRIVACY).optional(),
  offline: z.boolean().optional(),
  /** The alias's own traits; the target's are never inherited (a trait names one model per type). */
  traits: modelBase.traits.optional(),
  contextLength: PositiveInt.optional(),
  capabilities: CapabilitiesSchema.optional(),
  constraints: z.record(z.string(), z.unknown()).optional(),
  spec: z.record(z.string(), z.unknown()).optional(),
  pricing: z.record(z.string(), z.unknown()).optional(),
  watermark: z.boolean().optional(),
  disabled: z.literal(false).optional(),
});
export type ModelAliasConfig = z.output<typeof ModelAliasSchema>;
export const isModelAlias = (model: ModelConfig | ModelAliasConfig): model is ModelAliasConfig => 'aliasOf' in model;

export const ProviderConfigSchema = z
  .strictObject({
    id: ProviderId,
    type: z.enum(PROVIDER_TYPES),
    baseUrl: z.url().optional(),
    apiKey: z.string().min(1).optional(),
    timeoutMs: z.number().int().positive().max(3_600_000).optional(),
    maxRetries: z.number().int().min(0).max(10).optional(),
    cooldownMs: z.number().int().nonnegative().optional(),
    headers: z.record(z.string().min(1), z.string()).optional(),
    /** `owned_by` of the models this provider serves first, unless a model sets its own. */
    ownedBy: z.string().min(1).optional(),
    /** Adapter-specific settings, passed through to the adapter as they are. */
    options: z.record(z.string(), z.json()).optional(),
    disabled: z.literal(false).optional(),
  })
  .superRefine((provider, ctx) => {
    if (provider.baseUrl === undefined && !BASE_URL_OPTIONAL.includes(provider.type)) {
      ctx.addIssue({ code: 'custom', path: ['baseUrl'], message: `a ${provider.type} provider needs baseUrl` });
    }
    if (provider.type === 'queue') {
      const parsed = QueueApiOptionsSchema.safeParse(provider.options ?? {});
      for (const issue of parsed.error?.issues ?? [])
        ctx.addIssue({ code: 'custom', path: ['options', ...issue.path], message: issue.message });
    }
  });
export type ProviderConfig = z.output<typeof ProviderConfigSchema>;

export const CharacterConfigSchema = z.strictObject({
  slug: Slug,
  name: z.string().min(1).max(200),
  description: z.string().default(''),
  author: z.string().default(''),
  adult: z.boolean().default(false),
  featured: z.boolean().default(false),
  tags: z.array(z.string().trim().min(1).max(50)).max(30).default([]),
  modelId: ModelId,
  webEnabled: z.boolean().default(false),
  systemPrompt: z.string().min(1),
  photoUrl: z.url().optional(),
  shareUrl: z.url().optional(),
  disabled: z.literal(false).optional(),
});
export type CharacterConfig = z.output<typeof CharacterConfigSchema>;

/** `{ <type>: { <foreign name>: <model id> } }`; in the operator file a `null` target removes a default mapping. */
export const CompatibilityMappingsSchema = z.partialRecord(ModelTypeSchema, z.record(ModelId, ModelId.nullable()));

/** `{ id | slug, disabled: true }` removes the built-in entry with that id (other fields are ignored). */
const disabledEntry = <K extends string>(key: K, value: z.ZodType<string>) =>
  z.looseObject({ [key]: value, disabled: z.literal(true) } as { [P in K]: z.ZodType<string> } & {
    disabled: z.ZodLiteral<true>;
  });

/**
 * Zero-config discovery (OPENAI_COMPATIBLE_BASE_URL): every model the upstream lists becomes a text model with
 * these settings. `traits` go to the first model listed; a configured model with the same id wins over a found one.
 */
export const DiscoveryConfigSchema = z.strictObject({
  /** USD (and DIEM) per 1M tokens; default input 0.5, output 2. */
  pricing: TextPricingSchema.prefault({ input: { usd: 0.5 }, output: { usd: 2 } }),
  contextLength: PositiveInt.default(32_768),
  traits: z.array(Trait).default([]),
  /** Default: function calling and response schemas on (vLLM, llama.cpp and Ollama serve both). */
  capabilities: CapabilitiesSchema.prefault({ supportsFunctionCalling: true, supportsResponseSchema: true }),
});
export type DiscoveryConfig = z.output<typeof DiscoveryConfigSchema>;
/** Discovery when the operator file has no `discovery` section. */
export const DEFAULT_DISCOVERY: DiscoveryConfig = DiscoveryConfigSchema.parse({});

/** `search_provider` identifier → one provider id, or ids in fallback order (docs/configuration.md). */
const SearchTargets = z
  .union([ProviderId, z.array(ProviderId).min(1)])
  .transform((ids) => (typeof ids === 'string' ? [ids] : ids));
export const SearchMappingSchema = z.strictObject({
  brave: SearchTargets.optional(),
  google: SearchTargets.optional(),
});
export type SearchMapping = z.output<typeof SearchMappingSchema>;

const ModelOrDisabledSchema = z.discriminatedUnion('disabled', [disabledEntry('id', ModelId), ModelConfigSchema]);
/** A model, an alias (an entry with `aliasOf`) or `{ id, disabled: true }`; each checked by its own schema. */
const ModelEntrySchema = z.unknown().transform((entry, ctx) => {
  const alias =
    typeof entry === 'object' &&
    entry !== null &&
    Object.hasOwn(entry, 'aliasOf') &&
    !('disabled' in entry && entry.disabled === true);
  const parsed = alias ? ModelAliasSchema.safeParse(entry) : ModelOrDisabledSchema.safeParse(entry);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  return z.NEVER;
}) as unknown as z.ZodType<
  z.output<typeof ModelOrDisabledSchema> | ModelAliasConfig,
  z.input<typeof ModelOrDisabledSchema> | z.input<typeof ModelAliasSchema>
>;

export const OperatorConfigFileSchema = z.strictObject({
  /** Drop the built-in models, characters and mappings (the simulator provider stays available). */
  replaceDefaults: z.boolean().default(false),
  providers: z
    .array(z.discriminatedUnion('disabled', [disabledEntry('id', ProviderId), ProviderConfigSchema]))
    .default([]),
  models: z.array(ModelEntrySchema).default([]),
  compatibilityMappings: CompatibilityMappingsSchema.default({}),
  characters: z
    .array(z.discriminatedUnion('disabled', [disabledEntry('slug', Slug), CharacterConfigSchema]))
    .default([]),
  /** Which `searxng`/`brave` providers serve each web search identifier; unmapped identifiers use every one. */
  search: SearchMappingSchema.optional(),
  /** The crypto JSON-RPC proxy: networks and their node URLs, price per credit, caps (see rpc-config.ts). */
  rpc: RpcConfigSchema.optional(),
  /** Models found on the OPENAI_COMPATIBLE_BASE_URL upstream: their price, context length, traits and capabilities. */
  discovery: DiscoveryConfigSchema.optional(),
  /** Chat completions: `systemPrompt` is prepended to every conversation unless a request sets include_venice_system_prompt: false. */
  chat: ChatConfigSchema.optional(),
  /** Per-key rate limits: defaults by model type, limits by model tier, overrides by model id (src/rate-limits/limits.ts). */
  rateLimits: RateLimitsConfigSchema.optional(),
});
export type OperatorConfigFile = z.output<typeof OperatorConfigFileSchema>;
export type OperatorConfigFileInput = z.input<typeof OperatorConfigFileSchema>;

/** The effective configuration: defaults merged with the operator file, disabled entries removed, cross-checked. */
export interface OperatorConfig {
  providers: ProviderConfig[];
  models: ModelConfig[];
  compatibilityMappings: Partial<Record<(typeof MODEL_TYPES)[number], Record<string, string>>>;
  characters: CharacterConfig[];
  search: SearchMapping;
  /** The file's `rpc` section (absent: only the RPC_UPSTREAM_* env shortcuts serve networks). */
  rpc?: RpcConfig;
  /** The file's `discovery` section (absent: the documented defaults of DiscoveryConfigSchema). */
  discovery?: DiscoveryConfig;
  /** The file's `chat` section (absent: no operator system prompt). */
  chat?: ChatConfig;
  /** The file's `rateLimits` section (absent: the built-in limits of src/rate-limits/limits.ts). */
  rateLimits?: RateLimitsConfig;
}
