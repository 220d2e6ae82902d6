import { requireAccount } from '../../src/auth/permissions.ts';
import { formatNano } from '../../src/billing/money.ts';
import {
  ForbiddenError,
  InsufficientBalanceError,
  InvalidModelError,
  PayloadTooLargeError,
  SpendLimitExceededError,
  UpstreamError,
  ValidationError,
} from '../../src/errors.ts';
import { ASPECT_RATIOS, OUTPUT_FORMATS } from '../../src/media/images/edit.inputs.ts';
import type { ImageEditOutcome } from '../../src/media/images/image-edit.service.ts';
import { RateLimitExceededError } from '../../src/rate-limits/rate-limiter.ts';
import { builder } from '../builder.ts';
import type { GraphQLContext } from '../context.ts';
import { CurrencyEnum } from './enums.ts';
import { INCLUDE_BASE64_ARG, MediaFileRef, mediaFileFor, type MediaFile } from './media.ts';
// Registers PayloadTooLargeError as a GraphQL type.
import './text-parser.ts';

/*
 * editImage and upscaleImage: the REST routes' services (src/media/images/image-edit.service.ts) with the same
 * inputs; pictures go in as base64, data URLs or http(s) URLs and come back as a MediaFile (a signed URL, and base64
 * with includeBase64), stored only once the call is paid for.
 */

type EditAnswer = ImageEditOutcome & { readonly file: MediaFile };

const ImageResultRef = builder.objectRef<EditAnswer>('EditedImage').implement({
  description: 'An edited or upscaled picture.',
  fields: (t) => ({
    file: t.field({ type: MediaFileRef, resolve: (r) => r.file }),
    width: t.exposeInt('width'),
    height: t.exposeInt('height'),
    blurred: t.exposeBoolean('blurred', { description: 'Blurred as adult content (safe mode).' }),
    model: t.exposeString('model', { description: 'The model that served the call.' }),
    charged: t.field({
      type: 'Decimal',
      description: 'The amount charged, in `currency`.',
      resolve: (r) => formatNano(r.charge.charged),
    }),
    currency: t.field({ type: CurrencyEnum, description: 'The balance that paid.', resolve: (r) => r.charge.currency }),
  }),
});

const AspectRatioEnum = builder.enumType('EditAspectRatio', {
  description: 'REST `aspect_ratio`: AUTO (infer from the input), or width:height.',
  values: Object.fromEntries(
    ASPECT_RATIOS.map((ratio) => [ratio === 'auto' ? 'AUTO' : `R${ratio.replace(':', '_')}`, { value: ratio }]),
  ) as Record<string, { value: (typeof ASPECT_RATIOS)[number] }>,
});
const OutputFormatEnum = builder.enumType('EditOutputFormat', {
  values: Object.fromEntries(OUTPUT_FORMATS.map((format) => [format.toUpperCase(), { value: format }])) as Record<
    string,
    { value: (typeof OUTPUT_FORMATS)[number] }
  >,
});

const EditImageInputRef = builder.inputType('EditImageInput', {
  fields: (t) => ({
    images: t.stringList({
      required: true,
      description: '1 to 3 pictures (base64, data URL or http(s) URL), under 25 MB each; the first is the base.',
    }),
    prompt: t.string({ required: true, description: '1 to 32,768 characters (and the model limit).' }),
    model: t.string({ required: false, description: 'An inpaint model; default: the default edit model.' }),
    aspectRatio: t.field({ type: AspectRatioEnum, required: false }),
    resolution: t.string({ required: false, description: '1K (default), 2K or 4K.' }),
    outputFormat: t.field({ type: OutputFormatEnum, required: false, description: 'Default PNG at 1K, else JPEG.' }),
    safeMode: t.boolean({ required: false, description: 'Default true: adult content is blurred.' }),
  }),
});

const UpscaleImageInputRef = builder.inputType('UpscaleImageInput', {
  fields: (t) => ({
    image: t.string({ required: true, description: 'Base64, a data URL or an http(s) URL; under 25 MB.' }),
    scale: t.float({ required: false, description: '2 to 4, default 2.' }),
    creativity: t.float({ required: false, description: 'Default 0.01, clamped to 0–0.02.' }),
    model: t.string({ required: false, description: 'An upscale model; default: the default upscaler.' }),
  }),
});

const ERRORS = [
  ValidationError,
  InvalidModelError,
  PayloadTooLargeError,
  ForbiddenError,
  InsufficientBalanceError,
  SpendLimitExceededError,
  RateLimitExceededError,
  UpstreamError,
];

/** The paid call's picture, stored for the caller's account and signed. */
async function answer(
  context: GraphQLContext,
  outcome: Promise<ImageEditOutcome>,
  includeBase64: boolean | null | undefined,
): Promise<EditAnswer> {
  const done = await outcome;
  const { accountId } = requireAccount(context.auth);
  const file = await mediaFileFor(
    context,
    accountId,
    { bytes: done.bytes, contentType: done.contentType },
    { includeBase64 },
  );
  return { ...done, file };
}

const defined = <T extends Record<string, unknown>>(value: T) =>
  Object.fromEntries(Object.entries(value).filter(([, field]) => field !== null && field !== undefined));

// Mutations: they charge, and GET requests serve queries only.
builder.mutationFields((t) => ({
  editImage: t.field({
    type: ImageResultRef,
    description: 'Edit a picture (one image) or combine up to three (multi-edit) with a prompt; priced by model.',
    authScopes: { account: true },
    args: {
      input: t.arg({ type: EditImageInputRef, required: true }),
      includeBase64: t.arg.boolean(INCLUDE_BASE64_ARG),
    },
    errors: { types: ERRORS },
    resolve: (_root, { input, includeBase64 }, context) => {
      const common = defined({
        prompt: input.prompt,
        aspect_ratio: input.aspectRatio,
        resolution: input.resolution,
        output_format: input.outputFormat,
        safe_mode: input.safeMode,
      });
      const { imageEdit } = context.services;
      const options = { signal: context.signal };
      // One picture is an edit (priced as POST /image/edit); more are a multi-edit.
      const outcome =
        input.images.length === 1
          ? imageEdit.edit(
              context.auth,
              { ...common, image: input.images[0], ...defined({ model: input.model }) },
              options,
            )
          : imageEdit.multiEdit(
              context.auth,
              { ...common, images: input.images, ...defined({ modelId: input.model }) },
              options,
            );
      return answer(context, outcome, includeBase64);
    },
  }),
  upscaleImage: t.field({
    type: ImageResultRef,
    description: 'Upscale a picture 2× to 4× (output at most 16,777,216 pixels); priced by the effective scale.',
    authScopes: { account: true },
    args: {
      input: t.arg({ type: UpscaleImageInputRef, required: true }),
      includeBase64: t.arg.boolean(INCLUDE_BASE64_ARG),
    },
    errors: { types: ERRORS },
    resolve: (_root, { input, includeBase64 }, context) =>
      answer(
        context,
        context.services.imageEdit.upscale(
          context.auth,
          defined({ image: input.image, scale: input.scale, creativity: input.creativity, model: input.model }),
          { signal: context.signal },
        ),
        includeBase64,
      ),
  }),
}));
