import { z } from 'zod';

/*
 * The per-type parts of a model's `model_spec` in the operator file: `constraints` and the extra fields that sit
 * directly in model_spec. Keys are written exactly as the listing shows them. Fields left out get the listing's
 * defaults (src/catalog/model-record.ts).
 */

export const Strings = z.array(z.string().min(1));
export const PositiveInt = z.number().int().positive();
const Default = (value: z.ZodNumber) => z.strictObject({ default: value });
const QUALITIES = ['low', 'medium', 'high'] as const;

export const TextConstraints = z.looseObject({
  temperature: Default(z.number().min(0).max(2)).optional(),
  top_p: Default(z.number().min(0).max(1)).optional(),
  frequency_penalty: Default(z.number().min(-2).max(2)).optional(),
  presence_penalty: Default(z.number().min(-2).max(2)).optional(),
  repetition_penalty: Default(z.number().positive()).optional(),
});

const sizing = {
  promptCharacterLimit: PositiveInt.optional(),
  aspectRatios: Strings.optional(),
  resolutions: Strings.optional(),
  defaultResolution: z.string().optional(),
  qualities: z.array(z.enum(QUALITIES)).optional(),
  defaultQuality: z.enum(QUALITIES).optional(),
};

export const ImageConstraints = z.looseObject({
  ...sizing,
  steps: z.strictObject({ default: PositiveInt, max: PositiveInt }).optional(),
  widthHeightDivisor: PositiveInt.optional(),
  defaultAspectRatio: z.string().optional(),
  maxStyleReferences: PositiveInt.optional(),
  supportsStyleReferenceStrength: z.boolean().optional(),
});

/** Edits: `combineImages` says whether several input images are merged into one output. */
export const InpaintConstraints = z.looseObject({
  ...sizing,
  combineImages: z.boolean().optional(),
  /** Default 3, or 1 without combineImages. */
  maxInputImages: PositiveInt.optional(),
  /** false: the output keeps the input's size. */
  singleImageAspectRatio: z.boolean().optional(),
});

export const VideoConstraints = z.looseObject({
  aspect_ratios: Strings.optional(),
  resolutions: Strings.optional(),
  durations: Strings.optional(),
  model_type: z.enum(['image-to-video', 'text-to-video', 'video']).optional(),
  audio: z.boolean().optional(),
  /** Whether a request may switch the audio track on or off. */
  audio_configurable: z.boolean().optional(),
  prompt_character_limit: PositiveInt.optional(),
});

export const OtherConstraints = z.record(z.string(), z.json());

const Deprecation = z.strictObject({
  autoRemap: z.boolean(),
  date: z.string().min(1),
  removesAt: z.string().min(1),
  startsAt: z.string().min(1).optional(),
  replacementModelId: z.string().min(1).optional(),
});

const VoiceCloning = z.strictObject({
  mode: z.enum(['zero_shot', 'persistent']),
  accepted_formats: Strings,
  min_sample_seconds: z.number().nonnegative(),
  retention_days: z.number().int().nonnegative(),
});

const RESERVED_SPEC_KEYS = [
  'name',
  'description',
  'modelSource',
  'offline',
  'privacy',
  'traits',
  'availableContextTokens',
  'capabilities',
  'constraints',
  'pricing',
];

/** Extra `model_spec` fields: shared flags, then text, embedding, image, speech and music fields. */
export const SpecExtrasSchema = z
  .looseObject({
    // Every type.
    uncensored: z.boolean().optional(),
    beta: z.boolean().optional(),
    betaModel: z.boolean().optional(),
    regionRestrictions: z.array(z.string().regex(/^[A-Z]{2}$/, 'a two-letter country code, e.g. US')).optional(),
    deprecation: Deprecation.optional(),
    // Text.
    maxCompletionTokens: PositiveInt.optional(),
    // Embedding.
    embeddingDimensions: PositiveInt.optional(),
    maxInputTokens: PositiveInt.optional(),
    supportsCustomDimensions: z.boolean().optional(),
    // Image.
    supportsStyleReferences: z.boolean().optional(),
    // Speech and music.
    voices: Strings.optional(),
    default_voice: z.string().min(1).optional(),
    voice_cloning: VoiceCloning.optional(),
    supports_custom_voice_id: z.boolean().optional(),
    supported_formats: Strings.optional(),
    default_format: z.string().min(1).optional(),
    prompt_character_limit: PositiveInt.optional(),
    min_prompt_length: z.number().int().nonnegative().optional(),
    lyrics_character_limit: PositiveInt.optional(),
    lyrics_required: z.boolean().optional(),
    supports_lyrics: z.boolean().optional(),
    supports_force_instrumental: z.boolean().optional(),
    supports_lyrics_optimizer: z.boolean().optional(),
    supports_loop: z.boolean().optional(),
    supports_language_code: z.boolean().optional(),
    supports_speed: z.boolean().optional(),
    default_speed: z.number().positive().optional(),
    min_speed: z.number().positive().optional(),
    max_speed: z.number().positive().optional(),
    duration_options: z.array(PositiveInt).optional(),
    min_duration: PositiveInt.optional(),
    max_duration: PositiveInt.optional(),
    default_duration: PositiveInt.optional(),
    supportsPromptParam: z.boolean().optional(),
    supportsTemperatureParam: z.boolean().optional(),
    supportsTopPParam: z.boolean().optional(),
  })
  .superRefine((spec, ctx) => {
    for (const key of Object.keys(spec)) {
      if (RESERVED_SPEC_KEYS.includes(key))
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `"${key}" is a model field; set it on the model, not in spec`,
        });
    }
    if (spec.default_voice !== undefined && spec.voices && !spec.voices.includes(spec.default_voice)) {
      ctx.addIssue({
        code: 'custom',
        path: ['default_voice'],
        message: `default_voice "${spec.default_voice}" is not in voices`,
      });
    }
    if (
      spec.default_format !== undefined &&
      spec.supported_formats &&
      !spec.supported_formats.includes(spec.default_format)
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['default_format'],
        message: `default_format "${spec.default_format}" is not in supported_formats`,
      });
    }
  });
