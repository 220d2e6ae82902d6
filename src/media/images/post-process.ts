import type { Metadata } from 'sharp';
import { UpstreamError } from '../../errors.ts';
import type { EngineImage, ImageFormat } from '../../providers/image/image-engine.ts';
import type { EncodePlan } from '../../providers/image/picture-encode.ts';
import { encodeInThread } from '../../providers/image/picture-thread.ts';
import type { Slots } from './slots.ts';
import { loadSharp } from './sharp-module.ts';
import { stripMetadata } from './strip-metadata.ts';

/*
 * What every engine's picture goes through before a caller sees it (generation, edits, upscales): the output
 * format and quality, the caller's choice of metadata (prompt, model and seed in EXIF and XMP, or nothing at all),
 * a small watermark, and a strong blur of adult content in safe mode. Here it is decided what a picture needs; a
 * re-encode runs in the picture thread (providers/image/picture-thread.ts), its pixels in libvips' threads.
 * A picture that needs none of these (the same format, no watermark, metadata, blur or turn) is passed through
 * with its metadata stripped, not decoded: a re-encode is most of the cost of an image call (bench/RESULTS.md).
 */

export interface PostProcessOptions {
  readonly format: ImageFormat;
  /** 1–100 for jpeg and webp (default: sharp's, 80); png is lossless and ignores it. */
  readonly quality?: number | undefined;
  /** Embedded as EXIF and XMP when given; absent: the picture carries no metadata at all. */
  readonly metadata?:
    { readonly prompt: string; readonly model: string; readonly seed?: number | undefined } | undefined;
  readonly watermark: boolean;
  /** Blur pictures the engine flagged as adult. */
  readonly safeMode: boolean;
  /** The queue a re-encode waits its turn in (pixel-work.ts); none when the caller holds a turn already. */
  readonly slots?: Slots | undefined;
  readonly signal?: AbortSignal | undefined;
}

export interface ProcessedImage {
  readonly bytes: Buffer;
  /** `bytes` in canonical base64, when the engine's own text could be kept (a picture passed through as sent). */
  readonly base64?: Buffer | undefined;
  readonly contentType: string;
  readonly width: number;
  readonly height: number;
  /** The picture was blurred as adult content (routes answer `x-is-blurred: true`). */
  readonly blurred: boolean;
}

export const IMAGE_CONTENT_TYPES: Record<ImageFormat, string> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
};

export async function postProcess(image: EngineImage, options: PostProcessOptions): Promise<ProcessedImage> {
  const sharp = await loadSharp();
  let meta: Metadata;
  try {
    meta = await sharp(image.bytes).metadata();
  } catch {
    throw new UpstreamError('The image server sent a picture that cannot be read', 'UPSTREAM_ERROR');
  }
  const size = { width: meta.autoOrient.width, height: meta.autoOrient.height };
  // The blur is decided here from the engine's verdict alone: no other option of the call can skip it.
  const blurred = options.safeMode && image.adult;
  const unchanged =
    !blurred &&
    !options.watermark &&
    options.metadata === undefined &&
    options.quality === undefined &&
    meta.format === options.format &&
    (meta.orientation ?? 1) === 1 &&
    (meta.pages ?? 1) === 1;
  const stripped = unchanged ? stripMetadata(options.format, image.bytes) : undefined;
  if (stripped) {
    const base64 = stripped === image.bytes ? image.base64 : undefined;
    return { bytes: stripped, base64, contentType: IMAGE_CONTENT_TYPES[options.format], ...size, blurred: false };
  }
  const plan: EncodePlan = {
    format: options.format,
    quality: options.quality,
    // Strong enough that nothing is recognisable at any size.
    blurSigma: blurred ? Math.max(20, Math.round(Math.min(size.width, size.height) / 12)) : undefined,
    watermark: options.watermark ? size : undefined,
    metadata: options.metadata,
  };
  const encode = () => encodeInThread(image.bytes, plan);
  const { data, info } = await (options.slots ? options.slots.run(encode, options.signal) : encode());
  return {
    bytes: data,
    contentType: IMAGE_CONTENT_TYPES[options.format],
    width: info.width,
    height: info.height,
    blurred,
  };
}
