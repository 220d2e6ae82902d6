import { createHash } from 'node:crypto';
import { loadSharp } from '../../media/images/sharp-module.ts';
import { PNG_COMPRESSION_LEVEL, type GenerateImageRequest } from './image-engine.ts';

/*
 * The built-in engine's pictures: an SVG of a gradient and shapes whose colours and places come from a hash of the
 * prompt, seed and style, rendered by sharp, so the same request always gets the same picture, at any size. Every
 * picture says SIMULATED. Rendered in the picture thread (picture-thread.ts), or in place should it fail.
 */

const SHAPES = 14;

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

/** One picture as PNG bytes. */
export async function renderPicture(request: GenerateImageRequest, seed: number): Promise<Buffer> {
  const { width, height } = request;
  const sharp = await loadSharp();
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
