import sharp, { type Metadata } from 'sharp';
import { UpstreamError } from '../../errors.ts';
import { PNG_COMPRESSION_LEVEL, type EngineImage, type ImageFormat } from '../../providers/image/image-engine.ts';
import type { Slots } from './slots.ts';
import { stripMetadata } from './strip-metadata.ts';

/*
 * What every engine's picture goes through before a caller sees it (generation, edits, upscales): the output
 * format and quality, the caller's choice of metadata (prompt, model and seed in EXIF and XMP, or nothing at all),
 * a small watermark, and a strong blur of adult content in safe mode. Everything runs in libvips threads.
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

const WATERMARK_TEXT = 'Lagoon';
const SOFTWARE = 'Lagoon';

export async function postProcess(image: EngineImage, options: PostProcessOptions): Promise<ProcessedImage> {
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
  // Without withMetadata/keep*, sharp writes no EXIF, XMP, IPTC or ICC from the input: a clean picture.
  let pipeline = sharp(image.bytes).autoOrient();
  if (blurred) {
    // Strong enough that nothing is recognisable at any size.
    pipeline = pipeline.blur(Math.max(20, Math.round(Math.min(size.width, size.height) / 12)));
  }
  if (options.watermark) {
    pipeline = pipeline.composite([{ input: watermarkSvg(size.width, size.height), gravity: 'southeast' }]);
  }
  if (options.metadata) {
    const { prompt, model, seed } = options.metadata;
    const comment = JSON.stringify({ prompt, model, ...(seed === undefined ? {} : { seed }) });
    pipeline = pipeline
      .withExif({
        IFD0: { ImageDescription: prompt, Software: SOFTWARE, Make: SOFTWARE, Model: model },
        IFD2: { UserComment: comment },
      })
      .withXmp(xmpPacket(prompt, model, seed));
  }
  const quality = options.quality;
  if (options.format === 'jpeg') pipeline = pipeline.jpeg(quality === undefined ? {} : { quality });
  else if (options.format === 'webp') pipeline = pipeline.webp(quality === undefined ? {} : { quality });
  else pipeline = pipeline.png({ compressionLevel: PNG_COMPRESSION_LEVEL });
  const encode = () => pipeline.toBuffer({ resolveWithObject: true });
  const { data, info } = await (options.slots ? options.slots.run(encode, options.signal) : encode());
  return {
    bytes: data,
    contentType: IMAGE_CONTENT_TYPES[options.format],
    width: info.width,
    height: info.height,
    blurred,
  };
}

/**
 * The watermark: small text in the bottom right corner, scaled to the picture. The SVG covers only the text's box
 * (rasterising a picture-sized SVG cost ~50 ms a megapixel; this costs ~1 ms), placed by gravity.
 */
function watermarkSvg(width: number, height: number): Buffer {
  const size = Math.max(8, Math.round(Math.min(width, height) / 32));
  const boxWidth = Math.min(width, Math.ceil(size * 0.62 * WATERMARK_TEXT.length + size));
  const boxHeight = Math.min(height, Math.ceil(size * 1.6));
  return Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${boxWidth}" height="${boxHeight}">` +
      `<text x="${boxWidth - size / 2}" y="${boxHeight - size / 2}" text-anchor="end" ` +
      `font-family="DejaVu Sans, sans-serif" font-size="${size}" fill="white" fill-opacity="0.7" stroke="black" ` +
      `stroke-opacity="0.35" stroke-width="1">${WATERMARK_TEXT}</text></svg>`,
  );
}

function escapeXml(text: string): string {
  return text.replace(/[<>&'"]/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** A minimal XMP packet: the prompt as dc:description, the model and seed in Lagoon's own namespace. */
export function xmpPacket(prompt: string, model: string, seed: number | undefined): string {
  return (
    `<?xpacket begin="\u{feff}" id="W5M0MpCehiHzreSzNTczkc9d"?>` +
    `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">` +
    `<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" ` +
    `xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmlns:lagoon="urn:lagoon:image:1.0">` +
    `<dc:description><rdf:Alt><rdf:li xml:lang="x-default">${escapeXml(prompt)}</rdf:li></rdf:Alt></dc:description>` +
    `<xmp:CreatorTool>${SOFTWARE}</xmp:CreatorTool><lagoon:model>${escapeXml(model)}</lagoon:model>` +
    (seed === undefined ? '' : `<lagoon:seed>${seed}</lagoon:seed>`) +
    `</rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="w"?>`
  );
}
