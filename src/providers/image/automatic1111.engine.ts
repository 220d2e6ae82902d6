import { z } from 'zod';
import { parseJson } from '../chat/openai-wire.ts';
import { brokenError } from '../upstream-errors.ts';
import type {
  EditImageRequest,
  EngineImage,
  GenerateImageRequest,
  ImageCallOptions,
  ImageEngine,
  UpscaleImageRequest,
} from './image-engine.ts';
import { decodePicture, ImageHttpClient, type ImageHttpSettings } from './image-http.ts';

/*
 * The AUTOMATIC1111 / Forge web UI API: `POST /sdapi/v1/txt2img` and `GET /sdapi/v1/prompt-styles`, under the
 * provider's base URL (e.g. `http://127.0.0.1:7860`). The upstream model name picks the checkpoint per call
 * (`override_settings.sd_model_checkpoint`) unless it is `default`. A safety checker's verdict, when the server
 * runs one, comes back in the `info` JSON (`nsfw` or `has_nsfw_concepts`, one flag per picture).
 */

/** `options:` of an automatic1111 provider in the operator file. */
const Options = z.strictObject({
  /** `sampler_name` of every call (default: the server's own default). */
  sampler: z.string().min(1).max(100).optional(),
  /** `scheduler` of every call (Forge and A1111 1.9+; default: the server's). */
  scheduler: z.string().min(1).max(100).optional(),
  /** `upscaler_1` of extra-single-image (upscales), e.g. "R-ESRGAN 4x+"; default "Lanczos". */
  upscaler: z.string().min(1).max(100).optional(),
  /** img2img `denoising_strength` of edits: how far the result may stray from the input (default 0.6). */
  denoisingStrength: z.number().min(0).max(1).optional(),
});
const UpscaleAnswer = z.looseObject({ image: z.string().min(1) });

const TxtToImgAnswer = z.looseObject({
  images: z.array(z.string()).min(1),
  info: z.string().optional(),
});
const InfoSchema = z.looseObject({
  index_of_first_image: z.number().int().nonnegative().optional(),
  nsfw: z.union([z.boolean(), z.array(z.boolean().nullable())]).optional(),
  has_nsfw_concepts: z.array(z.boolean().nullable()).optional(),
});
const StylesAnswer = z.array(z.looseObject({ name: z.string().min(1) }));

/** `upstreamModel` that leaves the server's loaded checkpoint alone. */
const SERVER_DEFAULT_MODEL = 'default';

export class Automatic1111Engine implements ImageEngine {
  static readonly options = Options;
  readonly simulated = false;
  private readonly http: ImageHttpClient;

  constructor(
    readonly id: string,
    private readonly settings: ImageHttpSettings & { options?: z.output<typeof Options> },
  ) {
    this.http = new ImageHttpClient(id, settings);
  }

  async generate(
    upstreamModel: string,
    request: GenerateImageRequest,
    options: ImageCallOptions,
  ): Promise<EngineImage[]> {
    const settings = this.settings.options ?? {};
    const payload = {
      prompt: request.prompt,
      negative_prompt: request.negativePrompt ?? '',
      steps: request.steps,
      ...(request.cfgScale === undefined ? {} : { cfg_scale: request.cfgScale }),
      seed: request.seed,
      width: request.width,
      height: request.height,
      batch_size: request.variants,
      n_iter: 1,
      ...(settings.sampler ? { sampler_name: settings.sampler } : {}),
      ...(settings.scheduler ? { scheduler: settings.scheduler } : {}),
      ...(request.stylePreset ? { styles: [request.stylePreset] } : {}),
      send_images: true,
      save_images: false,
      ...(upstreamModel === SERVER_DEFAULT_MODEL
        ? {}
        : { override_settings: { sd_model_checkpoint: upstreamModel }, override_settings_restore_afterwards: false }),
    };
    const answer = await this.http.pictures('POST', '/sdapi/v1/txt2img', payload, options.signal);
    const parsed = TxtToImgAnswer.safeParse(answer.value);
    if (!parsed.success) throw brokenError('sent a malformed txt2img answer');
    // A grid of the batch may come first (`index_of_first_image` says so), and extensions may append their own
    // pictures (ControlNet maps) after it: the batch is the `variants` pictures from the first one.
    const info = parseInfo(parsed.data.info);
    const first = info.index_of_first_image ?? 0;
    const images = parsed.data.images.slice(first, first + request.variants);
    if (images.length < request.variants) throw brokenError('sent fewer pictures than asked for');
    const flags = adultFlags(info);
    return images.map((image, index) => ({ ...decodePicture(answer.bytesOf(image)), adult: flags(index) }));
  }

  async styles(options: ImageCallOptions): Promise<string[]> {
    const parsed = StylesAnswer.safeParse(
      await this.http.json('GET', '/sdapi/v1/prompt-styles', undefined, options.signal),
    );
    if (!parsed.success) throw brokenError('sent a malformed style list');
    return [...new Set(parsed.data.map((style) => style.name))];
  }

  /** `POST /sdapi/v1/img2img`: the base as the init image, the second picture (multi-edit) as the inpaint mask. */
  async edit(upstreamModel: string, request: EditImageRequest, options: ImageCallOptions): Promise<EngineImage> {
    const settings = this.settings.options ?? {};
    const [image, mask] = request.images;
    const payload = {
      prompt: request.prompt,
      init_images: image ? [image.toString('base64')] : [],
      ...(mask ? { mask: mask.toString('base64') } : {}),
      width: request.width,
      height: request.height,
      denoising_strength: settings.denoisingStrength ?? 0.6,
      ...(settings.sampler ? { sampler_name: settings.sampler } : {}),
      ...(settings.scheduler ? { scheduler: settings.scheduler } : {}),
      send_images: true,
      save_images: false,
      ...(upstreamModel === SERVER_DEFAULT_MODEL
        ? {}
        : { override_settings: { sd_model_checkpoint: upstreamModel }, override_settings_restore_afterwards: false }),
    };
    const answer = await this.http.pictures('POST', '/sdapi/v1/img2img', payload, options.signal);
    const parsed = TxtToImgAnswer.safeParse(answer.value);
    if (!parsed.success) throw brokenError('sent a malformed img2img answer');
    // As for txt2img: the picture is the one `index_of_first_image` points at (extensions may append others).
    const info = parseInfo(parsed.data.info);
    const picture = parsed.data.images[info.index_of_first_image ?? 0];
    if (picture === undefined) throw brokenError('sent no picture');
    return { ...decodePicture(answer.bytesOf(picture)), adult: adultFlags(info)(0) };
  }

  /** `POST /sdapi/v1/extra-single-image` with the configured upscaler; `creativity` has no A1111 counterpart. */
  async upscale(_upstreamModel: string, request: UpscaleImageRequest, options: ImageCallOptions): Promise<EngineImage> {
    const payload = {
      image: request.image.toString('base64'),
      resize_mode: 0,
      upscaling_resize: request.scale,
      upscaler_1: this.settings.options?.upscaler ?? 'Lanczos',
    };
    const answer = await this.http.pictures('POST', '/sdapi/v1/extra-single-image', payload, options.signal);
    const parsed = UpscaleAnswer.safeParse(answer.value);
    if (!parsed.success) throw brokenError('sent a malformed extra-single-image answer');
    return { ...decodePicture(answer.bytesOf(parsed.data.image)), adult: false };
  }

  async close(): Promise<void> {
    await this.http.close();
  }
}

type Info = z.output<typeof InfoSchema>;

/** The `info` JSON string of a txt2img answer; anything unreadable reads as no information. */
function parseInfo(info: string | undefined): Info {
  const parsed = InfoSchema.safeParse(info === undefined ? {} : parseJson(info));
  return parsed.success ? parsed.data : {};
}

/** Picture index (within the batch) → the safety checker's verdict (no checker, or no verdict: not adult). */
function adultFlags(info: Info): (index: number) => boolean {
  const { nsfw, has_nsfw_concepts: concepts } = info;
  if (typeof nsfw === 'boolean') return () => nsfw;
  const list = nsfw ?? concepts ?? [];
  return (index) => list[index] === true;
}
