import { parseAtto, type Atto } from '../billing/money.ts';
import type { ModelsTable } from '../db/types.generated.ts';
import type { Selectable } from 'kysely';
import { providerBindings } from '../operator-config/provider-bindings.ts';
import type { ModelCapabilities, ModelConfig, PricePair, TextPricing } from '../operator-config/schema.ts';
import { DEFAULT_OWNED_BY, type ModelPrivacy, type ModelType, type ProviderBinding } from './model-types.ts';

export {
  DEFAULT_OWNED_BY,
  MODEL_PRIVACY,
  MODEL_TYPES,
  type ModelPrivacy,
  type ModelType,
  type ProviderBinding,
} from './model-types.ts';

/** `model_spec` exactly as the wire shows it; prices stay decimal numbers (use the helpers below for arithmetic). */
export interface ModelSpec {
  name: string;
  description: string;
  modelSource?: string;
  offline: boolean;
  privacy: ModelPrivacy;
  traits: string[];
  availableContextTokens?: number;
  capabilities?: ModelCapabilities;
  constraints?: Record<string, unknown>;
  pricing: Record<string, unknown>;
  /** Extra per-type fields (voices, default_voice, prompt_character_limit, …). */
  [extra: string]: unknown;
}

export interface CatalogModel {
  id: string;
  type: ModelType;
  ownedBy: string;
  created: Date;
  privacy: ModelPrivacy;
  offline: boolean;
  /** Text and embedding models; also the top-level `context_length` of a text record. */
  contextLength: number | null;
  traits: string[];
  spec: ModelSpec;
  /** Ordered: the first is primary, the rest are fallbacks. */
  providers: ProviderBinding[];
}

/** A model as the config describes it; `created` is null when the config does not pin it (the DB keeps first sight). */
export type CatalogModelDraft = Omit<CatalogModel, 'created'> & { created: Date | null };

const DEFAULT_TEXT_CAPABILITIES: ModelCapabilities = {
  optimizedForCode: false,
  quantization: 'not-available',
  supportsAudioInput: false,
  supportsFunctionCalling: false,
  supportsLogProbs: false,
  supportsMultipleImages: false,
  supportsReasoning: false,
  supportsReasoningEffort: false,
  supportsResponseSchema: false,
  supportsTeeAttestation: false,
  supportsE2EE: false,
  supportsVideoInput: false,
  supportsVision: false,
  supportsWebSearch: false,
  supportsXSearch: false,
};

/** Builds the wire `model_spec` of a configured model. */
export function buildModelSpec(model: ModelConfig): ModelSpec {
  const contextLength = 'contextLength' in model ? model.contextLength : undefined;
  const capabilities = model.type === 'text' ? { ...DEFAULT_TEXT_CAPABILITIES, ...model.capabilities } : undefined;
  return {
    name: model.name,
    description: model.description ?? '',
    ...(model.modelSource !== undefined && { modelSource: model.modelSource }),
    offline: model.offline,
    privacy: model.privacy,
    traits: [...model.traits],
    ...(contextLength !== undefined && { availableContextTokens: contextLength }),
    ...(capabilities && { capabilities }),
    ...(model.constraints !== undefined && { constraints: { ...model.constraints } }),
    ...(model.type === 'image' && model.watermark !== undefined && { watermark: model.watermark }),
    pricing: structuredClone(model.pricing) as Record<string, unknown>,
    ...structuredClone(model.spec ?? {}),
  };
}

export function modelFromConfig(model: ModelConfig): CatalogModelDraft {
  const contextLength = 'contextLength' in model ? (model.contextLength ?? null) : null;
  return {
    id: model.id,
    type: model.type,
    ownedBy: model.ownedBy ?? DEFAULT_OWNED_BY,
    created: model.created ?? null,
    privacy: model.privacy,
    offline: model.offline,
    contextLength,
    traits: [...model.traits],
    spec: buildModelSpec(model),
    providers: providerBindings(model),
  };
}

export type ModelRow = Pick<
  Selectable<ModelsTable>,
  'id' | 'type' | 'owned_by' | 'created_at' | 'privacy' | 'offline' | 'context_length' | 'spec' | 'providers'
>;

export function rowToModel(row: ModelRow): CatalogModel {
  // spec and providers were written by replaceCatalog from a validated config.
  const spec = row.spec as unknown as ModelSpec;
  return {
    id: row.id,
    type: row.type as ModelType,
    ownedBy: row.owned_by,
    created: row.created_at,
    privacy: row.privacy as ModelPrivacy,
    offline: row.offline,
    contextLength: row.context_length,
    traits: spec.traits,
    spec,
    providers: row.providers as unknown as ProviderBinding[],
  };
}

/** An exact price in atto-units (1e-18 USD / DIEM). */
export interface AttoPrice {
  usd: Atto;
  diem: Atto;
}

export const attoPrice = (pair: PricePair): AttoPrice => ({ usd: parseAtto(pair.usd), diem: parseAtto(pair.diem) });

/** Text and embedding prices per 1M tokens. */
export interface TextPrices {
  input: AttoPrice;
  output: AttoPrice;
  cacheInput?: AttoPrice;
  cacheWrite?: AttoPrice;
}

export function textPrices(model: CatalogModel): TextPrices {
  if (model.type !== 'text' && model.type !== 'embedding') {
    throw new Error(
      `Model ${model.id} is a ${model.type} model; token prices exist for text and embedding models only`,
    );
  }
  const pricing = model.spec.pricing as TextPricing;
  return {
    input: attoPrice(pricing.input),
    output: attoPrice(pricing.output),
    ...(pricing.cache_input && { cacheInput: attoPrice(pricing.cache_input) }),
    ...(pricing.cache_write && { cacheWrite: attoPrice(pricing.cache_write) }),
  };
}
