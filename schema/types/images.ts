import { requireAccount } from '../../src/auth/permissions.ts';
import { formatNano } from '../../src/billing/money.ts';
import { InvalidModelError, UpstreamError, ValidationError } from '../../src/errors.ts';
import type { GeneratedImages, ImageTiming } from '../../src/media/images/image.service.ts';
import { builder } from '../builder.ts';
import { CurrencyEnum } from './enums.ts';
import { INCLUDE_BASE64_ARG, MediaFileRef, mediaFileFor, PAID_MEDIA_ERRORS, type MediaFile } from './media.ts';

/*
 * Image generation over GraphQL: the REST body of POST /image/generate in camelCase; the pictures come back as
 * MediaFile (a signed URL, and base64 with includeBase64), stored only once the call is paid for.
 */

type GenerateImageAnswer = GeneratedImages & { readonly files: readonly MediaFile[] };

const ImageFormatEnum = builder.enumType('ImageFormat', {
  values: { JPEG: { value: 'jpeg' }, PNG: { value: 'png' }, WEBP: { value: 'webp' } } as const,
});

const ImageTimingRef = builder.objectRef<ImageTiming>('ImageTiming').implement({
  description: 'Milliseconds spent on each part of the call.',
  fields: (t) => ({
    inferenceDuration: t.exposeFloat('inferenceDuration'),
    inferencePreprocessingTime: t.exposeFloat('inferencePreprocessingTime'),
    inferenceQueueTime: t.exposeFloat('inferenceQueueTime'),
    total: t.exposeFloat('total'),
  }),
});

const GenerateImageResultRef = builder.objectRef<GenerateImageAnswer>('GenerateImageResult').implement({
  fields: (t) => ({
    id: t.exposeString('id'),
    model: t.string({ resolve: (generated) => generated.model.id }),
    images: t.field({ type: [MediaFileRef], resolve: (generated) => [...generated.files] }),
    width: t.int({
      description: 'Width of every picture, in pixels.',
      resolve: (generated) => generated.images[0]?.width ?? 0,
    }),
    height: t.int({
      description: 'Height of every picture, in pixels.',
      resolve: (generated) => generated.images[0]?.height ?? 0,
    }),
    seed: t.exposeInt('seed', { description: 'The seed used (random when none or 0 was sent).' }),
    simulated: t.exposeBoolean('simulated', { description: 'Made by the built-in simulator, not a real model.' }),
    blurred: t.exposeBoolean('blurred', { description: 'Some picture was blurred as adult content.' }),
    timing: t.field({ type: ImageTimingRef, resolve: (generated) => generated.timing }),
    request: t.field({
      type: 'JSONObject',
      description: 'The request as it ran.',
      resolve: (generated) => generated.request,
    }),
    charged: t.field({
      type: 'Decimal',
      description: 'The amount charged, in `currency`.',
      resolve: (generated) => formatNano(generated.charge.charged),
    }),
    currency: t.field({ type: CurrencyEnum, resolve: (generated) => generated.charge.currency }),
  }),
});

const GenerateImageInputRef = builder.inputType('GenerateImageInput', {
  description: 'The fields of POST /image/generate (docs/api.md, Images), in camelCase; no binary answer.',
  fields: (t) => ({
    model: t.string({ required: true }),
    prompt: t.string({ required: true }),
    negativePrompt: t.string({ required: false }),
    cfgScale: t.float({ required: false }),
    embedExifMetadata: t.boolean({ required: false }),
    format: t.field({ type: ImageFormatEnum, required: false, description: 'Default WEBP.' }),
    width: t.int({ required: false }),
    height: t.int({ required: false }),
    aspectRatio: t.string({ required: false }),
    resolution: t.string({ required: false }),
    hideWatermark: t.boolean({ required: false }),
    loraStrength: t.int({ required: false }),
    variants: t.int({ required: false }),
    safeMode: t.boolean({ required: false }),
    seed: t.int({ required: false }),
    steps: t.int({ required: false }),
    stylePreset: t.string({ required: false }),
  }),
});

const FIELD_NAMES = {
  negativePrompt: 'negative_prompt',
  cfgScale: 'cfg_scale',
  embedExifMetadata: 'embed_exif_metadata',
  aspectRatio: 'aspect_ratio',
  hideWatermark: 'hide_watermark',
  loraStrength: 'lora_strength',
  safeMode: 'safe_mode',
  stylePreset: 'style_preset',
} as const satisfies Record<string, string>;

/** The REST body: snake_case names, and only the fields the caller set (null means unset). */
function toRequestBody(input: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (value === null || value === undefined) continue;
    body[Object.hasOwn(FIELD_NAMES, key) ? FIELD_NAMES[key as keyof typeof FIELD_NAMES] : key] = value;
  }
  return body;
}

builder.mutationFields((t) => ({
  generateImage: t.field({
    type: GenerateImageResultRef,
    description:
      'Generate images, priced per picture from the model’s pricing; the price of every picture is held first, ' +
      'and nothing is charged when the engine fails.',
    authScopes: { account: true },
    args: {
      input: t.arg({ type: GenerateImageInputRef, required: true }),
      includeBase64: t.arg.boolean(INCLUDE_BASE64_ARG),
    },
    errors: { types: PAID_MEDIA_ERRORS },
    resolve: async (_root, { input, includeBase64 }, context): Promise<GenerateImageAnswer> => {
      const generated = await context.services.images.generation.generate(context.auth, toRequestBody(input), {
        signal: context.signal,
      });
      // The call was paid for by this account (generate required one): its pictures are stored for it.
      const { accountId } = requireAccount(context.auth);
      const files = await Promise.all(
        generated.images.map((image) =>
          mediaFileFor(context, accountId, { bytes: image.bytes, contentType: image.contentType }, { includeBase64 }),
        ),
      );
      return { ...generated, files };
    },
  }),
}));

builder.queryFields((t) => ({
  imageStyles: t.field({
    type: ['String'],
    description: 'Style names image generation accepts as `stylePreset` (default: the default image model’s). Public.',
    args: { model: t.arg.string({ required: false }) },
    errors: { types: [ValidationError, InvalidModelError, UpstreamError] },
    resolve: (_root, { model }, context) =>
      context.services.images.generation.styles(context.auth, model ? { model } : {}, { signal: context.signal }),
  }),
}));
