import { UpstreamError } from '../../errors.ts';
import type { ImageFormat } from '../../providers/image/image-engine.ts';
import type { AspectRatio } from './edit.inputs.ts';
import { invalid } from './image-input.ts';
import { loadSharp } from './sharp-module.ts';

/*
 * Output sizes of edits and upscales. Resolution tiers name the long side: 1K = 1024, 2K = 2048, 4K = 4096 pixels;
 * the short side follows the aspect ratio (or the input's), rounded to a multiple of 8 (what diffusion engines need).
 */

export const RESOLUTION_LONG_SIDE: Readonly<Record<string, number>> = { '1K': 1024, '2K': 2048, '4K': 4096 };
/** Upscaled pictures stay at or under this many pixels (a 4× of a large input is reduced to fit). */
export const MAX_UPSCALE_PIXELS = 16_777_216;

const roundTo8 = (n: number) => Math.max(8, Math.round(n / 8) * 8);

/** The tier, checked against the model's `resolutions` when it lists some (else 1K, 2K, 4K). */
export function resolveResolution(value: string | undefined, allowed: readonly string[] | undefined): string {
  const tiers = allowed && allowed.length > 0 ? allowed : Object.keys(RESOLUTION_LONG_SIDE);
  const tier = value ?? (tiers.includes('1K') ? '1K' : tiers[0]) ?? '1K';
  const match = tiers.find((t) => t.toLowerCase() === tier.toLowerCase());
  if (!match || RESOLUTION_LONG_SIDE[match] === undefined)
    throw invalid(['resolution'], `Must be one of ${tiers.join(', ')} for this model`);
  return match;
}

/** Width and height of the output: the ratio given, or the input's for `auto`/absent; the long side from the tier. */
export function outputSize(
  ratio: AspectRatio | undefined,
  allowedRatios: readonly string[] | undefined,
  resolution: string,
  input: { width: number; height: number },
): { width: number; height: number } {
  if (ratio !== undefined && ratio !== 'auto' && allowedRatios && !allowedRatios.includes(ratio))
    throw invalid(['aspect_ratio'], `Must be one of ${allowedRatios.join(', ')} for this model`);
  const [w, h] = ratio === undefined || ratio === 'auto' ? [input.width, input.height] : ratio.split(':').map(Number);
  return tierSize({ width: w ?? 0, height: h ?? 0 }, resolution);
}

/** A shape (any width:height) at a tier: the tier's long side, the short side in proportion (square if unknown). */
export function tierSize(
  shape: { width: number; height: number },
  resolution: string,
): { width: number; height: number } {
  const long = RESOLUTION_LONG_SIDE[resolution] ?? 1024;
  const { width: w, height: h } = shape;
  if (!w || !h) return { width: long, height: long };
  return w >= h ? { width: long, height: roundTo8((long * h) / w) } : { width: roundTo8((long * w) / h), height: long };
}

/** `jpg` is `jpeg`; absent: PNG at 1K, JPEG at larger tiers (smaller files for big pictures). */
export function outputFormat(value: string | undefined, resolution: string): ImageFormat {
  if (value === 'jpg' || value === 'jpeg') return 'jpeg';
  if (value === 'png' || value === 'webp') return value;
  return resolution === '1K' ? 'png' : 'jpeg';
}

/**
 * The scale actually applied: the requested one, reduced so the output stays at or under MAX_UPSCALE_PIXELS;
 * an input too large for any enlargement is refused.
 */
export function effectiveScale(requested: number, input: { width: number; height: number }): number {
  const fit = Math.sqrt(MAX_UPSCALE_PIXELS / (input.width * input.height));
  const scale = Math.min(requested, Math.floor(fit * 1000) / 1000);
  if (scale <= 1)
    throw invalid(
      ['image'],
      `Too large to upscale: the output would pass ${MAX_UPSCALE_PIXELS.toLocaleString('en-US')} pixels`,
    );
  return scale;
}

/** The engine's picture at exactly `size` (as it is when it already has that size; a lossless PNG otherwise). */
export async function fitTo(bytes: Buffer, size: { width: number; height: number }): Promise<Buffer> {
  const sharp = await loadSharp();
  let meta;
  try {
    meta = await sharp(bytes).metadata();
  } catch {
    throw new UpstreamError('The image server sent a picture that cannot be read', 'UPSTREAM_ERROR');
  }
  const { width, height } = meta.autoOrient;
  if (width === size.width && height === size.height) return bytes;
  return sharp(bytes)
    .autoOrient()
    .resize(size.width, size.height, { fit: 'cover' })
    .png({ compressionLevel: 1 })
    .toBuffer();
}
