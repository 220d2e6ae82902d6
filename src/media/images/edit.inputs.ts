import { z } from 'zod';

/*
 * Request bodies of POST /image/edit, /image/multi-edit and /image/upscale (and the GraphQL mutations): one zod
 * schema each. The pictures themselves are strings here (base64, data URL or http(s) URL) or a file part the route
 * passes beside the body; image-input.ts loads and checks them.
 */

export const ASPECT_RATIOS = ['auto', '1:1', '3:2', '16:9', '21:9', '9:16', '2:3', '3:4', '4:5'] as const;
export type AspectRatio = (typeof ASPECT_RATIOS)[number];
export const OUTPUT_FORMATS = ['jpeg', 'jpg', 'png', 'webp'] as const;

const Prompt = z.string().min(1).max(32_768).describe('What to change; 1 to 32,768 characters (and the model limit)');
const ImageText = z
  .string()
  .min(1)
  .describe('Base64 image data, a data URL or an http(s) URL; under 25 MB; 65,536 to 33,177,600 pixels');
const common = {
  prompt: Prompt,
  aspect_ratio: z.enum(ASPECT_RATIOS).optional().describe('Default: inferred from the (first) input image'),
  resolution: z.string().min(1).max(10).optional().describe('1K (default), 2K or 4K: long side 1024, 2048, 4096'),
  output_format: z.enum(OUTPUT_FORMATS).optional().describe('Default PNG at 1K, JPEG at 2K and 4K'),
  safe_mode: z.boolean().optional().describe('Default true: adult content is blurred'),
};

/** Unknown fields are ignored: OpenAI-style clients send extras (n, size, response_format). */
export const EditImageInput = z.object({
  image: ImageText.optional().describe(
    'Required (or a file part named image): base64, a data URL or an http(s) URL; under 25 MB',
  ),
  ...common,
  model: z.string().min(1).max(128).optional().describe('An inpaint model; default: the default edit model'),
  modelId: z.string().min(1).max(128).optional().describe('Deprecated alias of model'),
});
export type EditImageInput = z.output<typeof EditImageInput>;

export const MultiEditImageInput = z.object({
  images: z.array(ImageText).min(1).max(3).describe('1 to 3 images; the first is the base, the rest layers/masks'),
  ...common,
  modelId: z.string().min(1).max(128).optional().describe('An inpaint model; default: the default edit model'),
  model: z.string().min(1).max(128).optional().describe('Alias of modelId'),
});
export type MultiEditImageInput = z.output<typeof MultiEditImageInput>;

export const UpscaleImageInput = z.object({
  image: ImageText.optional().describe('Required (or a file part named image); under 25 MB; at least 65,536 pixels'),
  scale: z
    .number()
    .min(2)
    .max(4)
    .optional()
    .describe('2 to 4, default 2; reduced to keep the output ≤ 16,777,216 pixels'),
  creativity: z.number().nullable().optional().describe('Default 0.01; clamped to 0–0.02 (a resampler ignores it)'),
  model: z.string().min(1).max(128).optional().describe('An upscale model; default: the default upscaler'),
});
export type UpscaleImageInput = z.output<typeof UpscaleImageInput>;
