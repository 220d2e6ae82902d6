import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { SIMULATOR_IMAGE_STYLES } from '../../operator-config/default-config.ts';
import { cancelledError } from '../chat/upstream-errors.ts';
import {
  PNG_COMPRESSION_LEVEL,
  type EditImageRequest,
  type EngineImage,
  type GenerateImageRequest,
  type ImageCallOptions,
  type ImageEngine,
  type UpscaleImageRequest,
} from './image-engine.ts';
import { resampleUpscale, simulateEdit } from './local-edit.ts';

/*
 * The built-in image engine: no model, no network. A picture is an SVG of a gradient and shapes whose colours
 * and places come from a hash of the prompt, seed and style, rendered by sharp (libvips works off the event
 * loop), so the same request always gets the same picture, at any size. Every picture says SIMULATED.
 */

/**
 * Test hook: a prompt containing this marks the pictures as adult content, so safe mode's blur can be exercised
 * without a real safety checker (docs/api.md).
 */
export const SIMULATE_ADULT_MARKER = '[simulate:adult]';

const SHAPES = 14;

export class SimulatorImageEngine implements ImageEngine {
  readonly simulated = true;

  constructor(readonly id: string) {}

  async generate(
    _upstreamModel: string,
    request: GenerateImageRequest,
    options: ImageCallOptions,
  ): Promise<EngineImage[]> {
    const adult = request.prompt.toLowerCase().includes(SIMULATE_ADULT_MARKER);
    const images: EngineImage[] = [];
    for (let index = 0; index < request.variants; index += 1) {
      if (options.signal?.aborted) throw cancelledError();
      images.push({ bytes: await renderPicture(request, request.seed + index), adult });
    }
    if (options.signal?.aborted) throw cancelledError();
    return images;
  }

  styles(): Promise<string[]> {
    return Promise.resolve([...SIMULATOR_IMAGE_STYLES]);
  }

  /** A deterministic, visible edit (local-edit.ts): layers and a prompt-coloured band over the base. */
  async edit(_upstreamModel: string, request: EditImageRequest, options: ImageCallOptions): Promise<EngineImage> {
    const bytes = await simulateEdit(request, options.signal);
    if (options.signal?.aborted) throw cancelledError();
    return { bytes, adult: request.prompt.toLowerCase().includes(SIMULATE_ADULT_MARKER) };
  }

  /** A real resampler (Lanczos 3 and a mild sharpen), not an AI upscaler: `creativity` is ignored. */
  async upscale(_upstreamModel: string, request: UpscaleImageRequest, options: ImageCallOptions): Promise<EngineImage> {
    const bytes = await resampleUpscale(request, options.signal);
    if (options.signal?.aborted) throw cancelledError();
    return { bytes, adult: false };
  }
}

/** A stream of bytes derived from the request: the same request, the same bytes. */
class HashBytes {
  private block = 0;
  private offset = 0;
  private bytes: Buffer;

  constructor(private readonly key: string) {
    this.bytes = this.next();
  }

  /** 0 ≤ value < 1. */
  unit(): number {
    if (this.offset + 2 > this.bytes.length) {
      this.bytes = this.next();
      this.offset = 0;
    }
    const value = this.bytes.readUInt16BE(this.offset);
    this.offset += 2;
    return value / 65_536;
  }

  int(max: number): number {
    return Math.floor(this.unit() * max);
  }

  private next(): Buffer {
    this.block += 1;
    return createHash('sha256').update(`${this.key}\n${this.block}`).digest();
  }
}

function colour(hash: HashBytes, saturation: number, lightness: number): string {
  return `hsl(${hash.int(360)},${saturation}%,${lightness}%)`;
}

/** The SVG of one picture (shapes scale with the size, so every size shows the same composition). */
export function pictureSvg(request: GenerateImageRequest, seed: number): string {
  const { width, height } = request;
  const hash = new HashBytes(
    `${request.prompt}\n${seed}\n${request.stylePreset ?? ''}\n${request.negativePrompt ?? ''}`,
  );
  const vivid = request.stylePreset === 'Anime' || request.stylePreset === 'Comic Book' ? 90 : 60;
  const muted = request.stylePreset === 'Analog Film' || request.stylePreset === 'Cinematic' ? 25 : vivid;
  const shapes: string[] = [];
  const unit = Math.min(width, height);
  for (let index = 0; index < SHAPES; index += 1) {
    const fill = colour(hash, muted, 35 + hash.int(40));
    const opacity = (0.35 + hash.unit() * 0.5).toFixed(2);
    const x = Math.round(hash.unit() * width);
    const y = Math.round(hash.unit() * height);
    const size = Math.max(2, Math.round((0.05 + hash.unit() * 0.3) * unit));
    const kind = hash.int(3);
    if (kind === 0) shapes.push(`<circle cx="${x}" cy="${y}" r="${size}" fill="${fill}" fill-opacity="${opacity}"/>`);
    else if (kind === 1)
      shapes.push(
        `<rect x="${x - size}" y="${y - size}" width="${size * 2}" height="${Math.round(size * 1.3)}" ` +
          `fill="${fill}" fill-opacity="${opacity}" transform="rotate(${hash.int(90)} ${x} ${y})"/>`,
      );
    else
      shapes.push(
        `<polygon points="${x},${y - size} ${x + size},${y + size} ${x - size},${y + size}" ` +
          `fill="${fill}" fill-opacity="${opacity}"/>`,
      );
  }
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">` +
    `<defs><linearGradient id="bg" x1="0" y1="0" x2="${hash.unit().toFixed(2)}" y2="1">` +
    `<stop offset="0" stop-color="${colour(hash, muted, 70)}"/><stop offset="1" stop-color="${colour(hash, muted, 25)}"/>` +
    `</linearGradient></defs><rect width="100%" height="100%" fill="url(#bg)"/>${shapes.join('')}</svg>`
  );
}

/** The SIMULATED label, top left, drawn over the finished picture (so no style blurs it). */
function labelSvg(width: number, height: number): Buffer {
  const size = Math.max(8, Math.round(Math.min(width, height) / 24));
  return Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
      `<text x="${size / 2}" y="${size * 1.5}" font-family="DejaVu Sans, sans-serif" font-size="${size}" ` +
      `fill="white" fill-opacity="0.85" stroke="black" stroke-opacity="0.4" stroke-width="1">SIMULATED</text></svg>`,
  );
}

async function renderPicture(request: GenerateImageRequest, seed: number): Promise<Buffer> {
  const { width, height } = request;
  let picture = sharp(Buffer.from(pictureSvg(request, seed)));
  if (request.stylePreset === 'Pixel Art') {
    // Rendered small, then enlarged without smoothing.
    const block = Math.max(1, Math.round(Math.min(width, height) / 64));
    const small = await picture
      .resize(Math.max(1, Math.round(width / block)), Math.max(1, Math.round(height / block)))
      .png()
      .toBuffer();
    picture = sharp(small).resize(width, height, { kernel: 'nearest', fit: 'fill' });
  }
  // Opaque: the background covers the whole picture, so the alpha channel would only add bytes.
  return picture
    .composite([{ input: labelSvg(width, height), top: 0, left: 0 }])
    .removeAlpha()
    .png({ compressionLevel: PNG_COMPRESSION_LEVEL })
    .toBuffer();
}
