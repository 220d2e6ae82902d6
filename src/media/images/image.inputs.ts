import { z } from 'zod';

/*
 * The bodies of POST /image/generate and POST /images/generations (bounds in docs/api.md, Images), shared by REST
 * and GraphQL. Per-model rules (sizing style, prompt limit, steps, styles) are checked by the service, which
 * knows the model.
 */

export const GENERATE_PROMPT_MAX_CHARS = 7_500;
export const OPENAI_PROMPT_MAX_CHARS = 1_500;
export const IMAGE_SIDE_MAX = 1_280;
export const IMAGE_SIDE_DEFAULT = 1_024;
export const SEED_LIMIT = 999_999_999;
export const VARIANTS_MAX = 4;
export const IMAGE_FORMATS = ['jpeg', 'png', 'webp'] as const;

const chars = (text: string) => [...text].length;
const boundedText = (max: number, required: boolean) =>
  z
    .string({ error: 'Must be a string' })
    .refine((text) => !required || chars(text) >= 1, 'Required: at least 1 character')
    .refine((text) => chars(text) <= max, `At most ${max} characters`);

const side = (name: string) =>
  z
    .number({ error: 'Must be a number' })
    .int('Must be a whole number')
    .min(1, `Must be greater than 0`)
    .max(IMAGE_SIDE_MAX, `At most ${IMAGE_SIDE_MAX}`)
    .optional()
    .describe(`${name} in pixels, 1 to ${IMAGE_SIDE_MAX} (default ${IMAGE_SIDE_DEFAULT}); pixel-sized models only.`);

export const GenerateImageInput = z.object({
  model: z
    .string({ error: 'Required: an image model id' })
    .min(1, 'Required: an image model id')
    .describe('An image model id, trait or compatibility name.'),
  prompt: boundedText(GENERATE_PROMPT_MAX_CHARS, true).describe(
    `What to draw, 1 to ${GENERATE_PROMPT_MAX_CHARS} characters (the model's promptCharacterLimit may be lower).`,
  ),
  negative_prompt: boundedText(GENERATE_PROMPT_MAX_CHARS, false).optional().describe('What not to draw.'),
  cfg_scale: z
    .number({ error: 'Must be a number' })
    .gt(0, 'Must be greater than 0')
    .max(20, 'At most 20')
    .optional()
    .describe('How closely to follow the prompt, > 0 to 20.'),
  embed_exif_metadata: z
    .boolean({ error: 'Must be true or false' })
    .default(false)
    .describe('Embed the prompt, model and seed in EXIF and XMP (otherwise the picture carries no metadata).'),
  format: z.enum(IMAGE_FORMATS, { error: 'Must be one of: jpeg, png, webp' }).default('webp'),
  width: side('Width'),
  height: side('Height'),
  aspect_ratio: z
    .string({ error: 'Must be a string' })
    .min(1)
    .max(20)
    .optional()
    .describe('For aspect-ratio models, e.g. 16:9.'),
  resolution: z
    .string({ error: 'Must be a string' })
    .min(1)
    .max(10)
    .optional()
    .describe('For resolution-tier models, e.g. 1K, 2K, 4K.'),
  hide_watermark: z.boolean({ error: 'Must be true or false' }).default(false),
  inpaint: z.unknown().optional().describe('Deprecated and disabled: any value other than null is refused.'),
  lora_strength: z
    .number({ error: 'Must be a number' })
    .int('Must be a whole number')
    .min(0, 'Must be 0 to 100')
    .max(100, 'Must be 0 to 100')
    .optional(),
  return_binary: z
    .boolean({ error: 'Must be true or false' })
    .default(false)
    .describe('Answer with the picture itself (Content-Type image/<format>) instead of JSON.'),
  variants: z
    .number({ error: 'Must be a number' })
    .int('Must be a whole number')
    .min(1, `Must be 1 to ${VARIANTS_MAX}`)
    .max(VARIANTS_MAX, `Must be 1 to ${VARIANTS_MAX}`)
    .default(1)
    .describe(`How many pictures, 1 to ${VARIANTS_MAX} (only without return_binary); each is charged.`),
  safe_mode: z.boolean({ error: 'Must be true or false' }).default(true).describe('Blur pictures flagged as adult.'),
  seed: z
    .number({ error: 'Must be a number' })
    .int('Must be a whole number')
    .min(-SEED_LIMIT, `Must be ${-SEED_LIMIT} to ${SEED_LIMIT}`)
    .max(SEED_LIMIT, `Must be ${-SEED_LIMIT} to ${SEED_LIMIT}`)
    .default(0)
    .describe('0 or absent: a random seed, reported in `request.seed` and the x-image-seed header.'),
  steps: z
    .number({ error: 'Must be a number' })
    .int('Must be a whole number')
    .min(1, 'Must be at least 1')
    .optional()
    .describe(
      "Inference steps (default the model's, 8); at most the model's steps.max; ignored by models without steps.",
    ),
  style_preset: z
    .string({ error: 'Must be a string' })
    .min(1)
    .max(100)
    .optional()
    .describe('A name from GET /image/styles.'),
  enable_web_search: z
    .boolean({ error: 'Must be true or false' })
    .default(false)
    .describe('No image model of this service searches the web: true is refused.'),
});
export type GenerateImageInput = z.output<typeof GenerateImageInput>;

export const OPENAI_IMAGE_SIZES = [
  'auto',
  '256x256',
  '512x512',
  '1024x1024',
  '1536x1024',
  '1024x1536',
  '1792x1024',
  '1024x1792',
] as const;

const unused = (what: z.ZodType) => what.nullable().optional().describe('Accepted for compatibility; unused.');

export const OpenAIImageInput = z.object({
  prompt: boundedText(OPENAI_PROMPT_MAX_CHARS, true).describe(`1 to ${OPENAI_PROMPT_MAX_CHARS} characters.`),
  model: z
    .string({ error: 'Must be a string' })
    .min(1)
    .default('default')
    .describe('An image model id, trait or compatibility name (dall-e-3); unknown names use the default image model.'),
  n: z
    .number({ error: 'Must be a number' })
    .int('Must be a whole number')
    .min(1, 'Must be 1')
    .max(1, 'Must be 1')
    .nullable()
    .default(1),
  size: z
    .enum(OPENAI_IMAGE_SIZES, { error: `Must be one of: ${OPENAI_IMAGE_SIZES.join(', ')}` })
    .nullable()
    .default('auto'),
  response_format: z
    .enum(['b64_json', 'url'], { error: 'Must be b64_json or url' })
    .nullable()
    .default('b64_json')
    .describe('b64_json, or url (a data: URL).'),
  output_format: z.enum(IMAGE_FORMATS, { error: 'Must be one of: jpeg, png, webp' }).nullable().default('png'),
  moderation: z
    .enum(['auto', 'low'], { error: 'Must be auto or low' })
    .nullable()
    .default('auto')
    .describe('auto blurs adult content; low does not.'),
  background: unused(z.string({ error: 'Must be a string' })),
  output_compression: unused(
    z
      .number({ error: 'Must be a number' })
      .int('Must be a whole number')
      .min(0, 'Must be 0 to 100')
      .max(100, 'Must be 0 to 100'),
  ),
  quality: unused(z.string({ error: 'Must be a string' })),
  style: unused(z.string({ error: 'Must be a string' })),
  user: unused(z.string({ error: 'Must be a string' })),
});
export type OpenAIImageInput = z.output<typeof OpenAIImageInput>;

export const ImageStylesQuery = z.object({
  model: z
    .string()
    .min(1)
    .optional()
    .describe('An image model id, trait or compatibility name (default: the default image model).'),
});
