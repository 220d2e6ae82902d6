import { z } from 'zod';
import { brokenError } from '../upstream-errors.ts';
import type {
  EditImageRequest,
  EngineImage,
  GenerateImageRequest,
  ImageCallOptions,
  ImageEngine,
} from './image-engine.ts';
import { decodePicture, ImageHttpClient, type ImageHttpSettings } from './image-http.ts';
import { openAiEdit } from './remote-edit.ts';

/*
 * The OpenAI images protocol (`POST {baseUrl}/images/generations`, as LocalAI and OpenAI serve it). The base URL
 * is the one chat uses for the same provider (it ends in `/v1`), so one provider entry serves both. Only the
 * standard fields are sent (OpenAI refuses unknown ones): seed, steps, negative prompt and style are not portable.
 */

/**
 * `options:` of an openai-compatible provider are parsed strictly by the chat adapter too, so the image engine
 * reads none of its own and ignores the chat ones.
 */
const Options = z.looseObject({});

const AnswerSchema = z.looseObject({
  data: z
    .array(
      z.looseObject({
        b64_json: z.string().min(1).optional(),
        url: z.string().min(1).optional(),
        /** Some servers flag each picture. */
        nsfw: z.boolean().optional(),
      }),
    )
    .min(1),
  /** Diffusers-style servers flag the pictures in one list. */
  nsfw_content_detected: z.array(z.boolean().nullable()).optional(),
  has_nsfw_concepts: z.array(z.boolean().nullable()).optional(),
});

export class OpenAIImagesEngine implements ImageEngine {
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
    const payload = {
      model: upstreamModel,
      prompt: request.prompt,
      n: request.variants,
      size: `${request.width}x${request.height}`,
      response_format: 'b64_json',
    };
    const answer = await this.http.pictures('POST', '/images/generations', payload, options.signal);
    const parsed = AnswerSchema.safeParse(answer.value);
    if (!parsed.success) throw brokenError('sent a malformed images answer');
    const { data } = parsed;
    const flags = data.nsfw_content_detected ?? data.has_nsfw_concepts ?? [];
    return data.data.slice(0, request.variants).map((item, index) => {
      // A URL answer would need a second fetch from an address the upstream chose: b64_json was asked for.
      if (!item.b64_json) throw brokenError('sent a picture without b64_json');
      return { ...decodePicture(answer.bytesOf(item.b64_json)), adult: item.nsfw === true || flags[index] === true };
    });
  }

  /** `POST {baseUrl}/images/edits` (multipart): the base picture, and the second one as the mask. */
  edit(upstreamModel: string, request: EditImageRequest, options: ImageCallOptions): Promise<EngineImage> {
    return openAiEdit(this.settings, upstreamModel, request, options);
  }

  async close(): Promise<void> {
    await this.http.close();
  }
}
