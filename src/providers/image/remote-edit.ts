import { readAllLimited } from '../../byte-stream.ts';
import { AppError } from '../../errors.ts';
import { upstreamErrorMessage } from '../chat/openai-wire.ts';
import { brokenError, cancelledError, timeoutError } from '../upstream-errors.ts';
import type { EditImageRequest, EngineImage, ImageCallOptions } from './image-engine.ts';
import { decodePicture, statusError, type ImageHttpSettings } from './image-http.ts';

/*
 * `POST {baseUrl}/images/edits` of the OpenAI images API (OpenAI, LocalAI): multipart, which the JSON client of
 * image-http.ts does not speak, so it is sent with fetch; statuses are mapped by the same table (statusError).
 */

/** A base64 4K PNG is about 30 MB; an answer larger than this is refused rather than buffered. */
const MAX_ANSWER_BYTES = 128 * 1_048_576;

/** The base picture as `image`, the second (if any) as `mask`; b64_json asked for. */
export async function openAiEdit(
  settings: ImageHttpSettings,
  upstreamModel: string,
  request: EditImageRequest,
  options: ImageCallOptions,
): Promise<EngineImage> {
  const form = new FormData();
  form.set('model', upstreamModel);
  form.set('prompt', request.prompt);
  form.set('n', '1');
  form.set('size', `${request.width}x${request.height}`);
  form.set('response_format', 'b64_json');
  const [image, mask] = request.images;
  if (image) form.set('image', new Blob([new Uint8Array(image)], { type: 'image/png' }), 'image.png');
  if (mask) form.set('mask', new Blob([new Uint8Array(mask)], { type: 'image/png' }), 'mask.png');
  const body = await postForm(settings, `${settings.baseUrl.replace(/\/+$/, '')}/images/edits`, form, options);
  const answer = body as { data?: { b64_json?: unknown; nsfw?: unknown }[]; has_nsfw_concepts?: unknown[] };
  const first = answer.data?.[0];
  if (typeof first?.b64_json !== 'string' || first.b64_json.length === 0)
    throw brokenError('sent an answer without b64_json');
  return {
    ...decodePicture(first.b64_json),
    adult: first.nsfw === true || answer.has_nsfw_concepts?.[0] === true,
  };
}

async function postForm(
  settings: ImageHttpSettings,
  url: string,
  form: FormData,
  options: ImageCallOptions,
): Promise<unknown> {
  if (options.signal?.aborted) throw cancelledError();
  const deadline = AbortSignal.timeout(settings.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
  try {
    const response = await fetch(url, {
      method: 'POST',
      signal,
      headers: {
        accept: 'application/json',
        ...settings.headers,
        ...(settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {}),
      },
      body: form,
    });
    if (!response.body) throw brokenError('sent an empty answer');
    const limit = response.ok ? MAX_ANSWER_BYTES : 64 * 1024;
    const bytes = await readAllLimited(response.body, limit, () => brokenError('sent an answer that is too large'));
    const text = new TextDecoder().decode(bytes);
    if (!response.ok) throw statusError(response.status, upstreamErrorMessage(text));
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw brokenError('sent an answer that is not JSON');
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    if (options.signal?.aborted) throw cancelledError();
    if (deadline.aborted) throw timeoutError(settings.timeoutMs);
    throw brokenError('could not be reached', error instanceof Error ? error.message : String(error));
  }
}
