/*
 * The catalog's vocabulary, on its own so that the operator config (which names model types) and the catalog
 * (which builds models from that config) can both use it without importing each other.
 */

export const MODEL_TYPES = [
  'asr',
  'embedding',
  'image',
  'music',
  'text',
  'tts',
  'upscale',
  'inpaint',
  'video',
] as const;
export type ModelType = (typeof MODEL_TYPES)[number];
export const MODEL_PRIVACY = ['private', 'anonymized'] as const;
export type ModelPrivacy = (typeof MODEL_PRIVACY)[number];
/** `owned_by` of a model whose config and provider leave it open. */
export const DEFAULT_OWNED_BY = 'lagoon';

export interface ProviderBinding {
  providerId: string;
  upstreamModel: string;
}
