import { undici } from '../../undici.ts';
import { UpstreamError } from '../../errors.ts';
import { Slots } from '../../media/images/slots.ts';
import { loadSharp } from '../../media/images/sharp-module.ts';
import { upstreamStatusError } from '../upstream-errors.ts';

/** Takes a picture's background away: the answer is a PNG with an alpha channel, the subject kept. */
export interface BackgroundRemover {
  readonly id: string;
  remove(image: Buffer, signal?: AbortSignal): Promise<Buffer>;
}

/** 25 MB of answer at most from an HTTP engine (a transparent PNG of the largest input fits). */
const MAX_ANSWER_BYTES = 50_000_000;

/**
 * The segmentation model that ships inside @imgly/background-removal-node (ONNX, run on the CPU by onnxruntime-node;
 * nothing is downloaded). Loaded on first use, then kept; one picture at a time per process, since a call already
 * uses every core and holds a few hundred megabytes while it runs.
 */
export class LocalBackgroundRemover implements BackgroundRemover {
  readonly id = 'local';
  private readonly slots = new Slots(1);
  private library: Promise<RemoveBackground> | undefined;

  constructor(private readonly model: 'small' | 'medium') {}

  async remove(image: Buffer, signal?: AbortSignal): Promise<Buffer> {
    const sharp = await loadSharp();
    // The model decodes PNG, JPEG and WebP; anything else sharp reads is handed over as PNG.
    const { format } = await sharp(image).metadata();
    const input =
      format === 'png' || format === 'jpeg' || format === 'webp' ? image : await sharp(image).png().toBuffer();
    const mime = format === 'jpeg' ? 'image/jpeg' : format === 'webp' ? 'image/webp' : 'image/png';
    return this.slots.run(async () => {
      const removeBackground = await (this.library ??= loadRemoveBackground());
      signal?.throwIfAborted();
      const blob = await removeBackground(new Blob([new Uint8Array(input)], { type: mime }), {
        model: this.model,
        output: { format: 'image/png' },
      });
      return Buffer.from(await blob.arrayBuffer());
    }, signal);
  }
}

type RemoveBackground = (
  image: Blob,
  configuration: { model: 'small' | 'medium'; output: { format: 'image/png' } },
) => Promise<Blob>;

/** The package is large (its model is in it): imported only when a picture first needs it. */
async function loadRemoveBackground(): Promise<RemoveBackground> {
  const library: { removeBackground?: unknown } = await import('@imgly/background-removal-node');
  if (typeof library.removeBackground !== 'function')
    throw new Error('@imgly/background-removal-node has no removeBackground');
  return library.removeBackground as RemoveBackground;
}

/**
 * An HTTP engine in the style of rembg's server: `POST <url>` with the picture as the multipart `file` part, the
 * cut-out picture as the answer. Whatever format it answers in is returned as PNG.
 */
export class HttpBackgroundRemover implements BackgroundRemover {
  readonly id = 'http';

  constructor(
    private readonly url: string,
    private readonly timeoutMs = 120_000,
  ) {}

  async remove(image: Buffer, signal?: AbortSignal): Promise<Buffer> {
    const { FormData, request } = undici();
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(image)]), 'image');
    const deadline = AbortSignal.timeout(this.timeoutMs);
    let response;
    try {
      response = await request(this.url, {
        method: 'POST',
        body: form,
        signal: signal ? AbortSignal.any([signal, deadline]) : deadline,
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      if (deadline.aborted)
        throw new UpstreamError('The background removal server did not answer in time', 'REQUEST_TIMEOUT');
      throw new UpstreamError('The background removal server could not be reached', 'UPSTREAM_ERROR');
    }
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of response.body) {
      total += (chunk as Buffer).length;
      if (total > MAX_ANSWER_BYTES) {
        response.body.destroy();
        throw new UpstreamError('The background removal server sent an answer that is too large', 'UPSTREAM_ERROR');
      }
      chunks.push(chunk as Buffer);
    }
    const body = Buffer.concat(chunks);
    if (response.statusCode !== 200)
      throw upstreamStatusError(response.statusCode, undefined, 'background removal server');
    const sharp = await loadSharp();
    try {
      return await sharp(body).ensureAlpha().png().toBuffer();
    } catch {
      throw new UpstreamError('The background removal server did not answer with a picture', 'UPSTREAM_ERROR');
    }
  }
}
