import type { CatalogModel, ModelSpec, ModelType } from './model.ts';

/*
 * The listing's `model_spec` of a model: the configured spec with every per-type field the record always carries
 * filled in (constraints a client reads before calling, the flags whose absence means "no"). The defaults are
 * for the listing only: services read the spec as configured, so a text model with no temperature configured
 * still sends none upstream (the model server's own default applies) while its record shows 1.
 */

type Fields = Record<string, unknown>;
type RecordSource = Pick<CatalogModel, 'type' | 'spec' | 'contextLength'>;

const TEXT_CONSTRAINTS: Fields = { temperature: { default: 1 }, top_p: { default: 1 } };
const IMAGE_CONSTRAINTS: Fields = {
  promptCharacterLimit: 1_500,
  steps: { default: 8, max: 30 },
  widthHeightDivisor: 8,
};
const VIDEO_CONSTRAINTS: Fields = {
  aspect_ratios: [],
  resolutions: [],
  durations: [],
  model_type: 'text-to-video',
  audio: false,
  audio_configurable: false,
};

/** Per-type defaults of the fields directly in model_spec. */
function specDefaults(model: RecordSource): Fields {
  switch (model.type) {
    case 'embedding':
      return {
        supportsCustomDimensions: false,
        ...(model.contextLength !== null && { maxInputTokens: model.contextLength }),
      };
    case 'image':
      return { supportsStyleReferences: false };
    case 'tts':
      return { voices: [], supports_custom_voice_id: false };
    case 'music':
      return {
        supports_lyrics: false,
        lyrics_required: false,
        supports_force_instrumental: false,
        supports_loop: false,
        supports_custom_voice_id: false,
        supports_language_code: false,
        supports_speed: false,
      };
    default:
      return {};
  }
}

function constraintDefaults(model: RecordSource): Fields | undefined {
  const types: Partial<Record<ModelType, () => Fields>> = {
    text: () => TEXT_CONSTRAINTS,
    image: () => IMAGE_CONSTRAINTS,
    // An edit model priced for extra input images takes several and combines them.
    inpaint: () => ({
      aspectRatios: ['auto'],
      promptCharacterLimit: 32_768,
      combineImages: (model.spec.pricing as { inputImages?: unknown }).inputImages !== undefined,
    }),
    video: () => VIDEO_CONSTRAINTS,
  };
  return types[model.type]?.();
}

/** The `model_spec` of the listing (REST `GET /models`, GraphQL `Model.spec`). */
export function modelRecordSpec(model: RecordSource): ModelSpec {
  const { uncensored, constraints, ...spec } = model.spec;
  const defaults = constraintDefaults(model);
  const missing = Object.entries(specDefaults(model)).filter(([key]) => !Object.hasOwn(spec, key));
  return {
    ...spec,
    ...Object.fromEntries(missing),
    // Present only when true.
    ...(uncensored === true && { uncensored: true }),
    ...((defaults ?? constraints) && { constraints: { ...defaults, ...constraints } }),
  };
}

/** `?type=code`: text models whose capabilities say they are optimised for code. */
export const isCodeModel = (model: CatalogModel): boolean =>
  model.type === 'text' && model.spec.capabilities?.optimizedForCode === true;
