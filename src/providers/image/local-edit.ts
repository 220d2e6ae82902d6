import { createHash } from 'node:crypto';
import { loadSharp } from '../../media/images/sharp-module.ts';
import { PNG_COMPRESSION_LEVEL, type EditImageRequest, type UpscaleImageRequest } from './image-engine.ts';

/*
 * The built-in edit and upscale engines' pixels, done in libvips threads (sharp) so the event loop stays free.
 * The simulator's edit is deterministic and visible, not a model: the base picture at the requested size, the other
 * pictures laid over it half-transparent, and a band tinted with a colour derived from the prompt. The upscaler is a
 * real resampler (Lanczos 3 and a mild sharpen), not an AI upscaler: `creativity` has nothing to act on.
 */

/** The service's PNG level: the service re-encodes only when the output needs a change, else passes it on. */
const INTERMEDIATE_PNG = { compressionLevel: PNG_COMPRESSION_LEVEL } as const;

export async function simulateEdit(request: EditImageRequest, signal?: AbortSignal): Promise<Buffer> {
  const { width, height, prompt } = request;
  const [base, ...layers] = request.images;
  if (!base) throw new Error('simulateEdit needs at least one image');
  const sharp = await loadSharp();
  const fit = (bytes: Buffer) =>
    sharp(bytes, { limitInputPixels: false }).rotate().resize(width, height, { fit: 'cover' }).ensureAlpha();
  const overlays = await Promise.all(
    layers.map(async (layer) => ({
      // Half-transparent, so the base shows through each layer.
      input: await fit(layer)
        .composite([{ input: halfAlpha(width, height), blend: 'dest-in' }])
        .png()
        .toBuffer(),
      blend: 'over' as const,
    })),
  );
  signal?.throwIfAborted();
  const bytes = await fit(base)
    .composite([...overlays, { input: tintBand(prompt, width, height), blend: 'over' }])
    .png(INTERMEDIATE_PNG)
    .toBuffer();
  signal?.throwIfAborted();
  return bytes;
}

export async function resampleUpscale(request: UpscaleImageRequest, signal?: AbortSignal): Promise<Buffer> {
  const sharp = await loadSharp();
  const image = sharp(request.image, { limitInputPixels: false }).rotate();
  const meta = await image.metadata();
  const swap = (meta.orientation ?? 1) >= 5;
  const width = (swap ? meta.height : meta.width) ?? 1;
  const height = (swap ? meta.width : meta.height) ?? 1;
  signal?.throwIfAborted();
  return image
    .resize(Math.floor(width * request.scale), Math.floor(height * request.scale), { kernel: 'lanczos3' })
    .sharpen({ sigma: 0.6 })
    .png(INTERMEDIATE_PNG)
    .toBuffer();
}

function halfAlpha(width: number, height: number): Buffer {
  return Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#fff" fill-opacity="0.5"/></svg>`,
  );
}

/** A horizontal band across the middle third, its colour from a hash of the prompt. */
function tintBand(prompt: string, width: number, height: number): Buffer {
  const hash = createHash('sha256').update(prompt).digest();
  const colour = `rgb(${hash[0] ?? 0},${hash[1] ?? 0},${hash[2] ?? 0})`;
  const top = Math.round(height / 3);
  return Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
      `<rect x="0" y="${top}" width="${width}" height="${Math.max(1, Math.round(height / 3))}" fill="${colour}" fill-opacity="0.45"/></svg>`,
  );
}
