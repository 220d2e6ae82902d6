import { PNG_COMPRESSION_LEVEL, type ImageFormat } from './image-engine.ts';
import { loadSharp } from '../../media/images/sharp-module.ts';

/*
 * A picture re-encoded for a caller (media/images/post-process.ts decides when): turned upright, blurred when it is
 * adult content in safe mode, watermarked, with the prompt in EXIF and XMP or no metadata at all, in the format and
 * quality asked for. The plan is plain data, so the work can run in the picture thread (picture-thread.ts).
 */

export interface EncodePlan {
  readonly format: ImageFormat;
  /** 1–100 for jpeg and webp (default: sharp's, 80); png is lossless and ignores it. */
  readonly quality?: number | undefined;
  /** A Gaussian blur of this sigma, for adult content in safe mode. */
  readonly blurSigma?: number | undefined;
  /** The upright picture's size, when the watermark goes on. */
  readonly watermark?: { readonly width: number; readonly height: number } | undefined;
  /** Embedded as EXIF and XMP when given; absent: the picture carries no metadata at all. */
  readonly metadata?:
    { readonly prompt: string; readonly model: string; readonly seed?: number | undefined } | undefined;
}

export interface EncodedPicture {
  readonly data: Buffer;
  readonly info: { readonly width: number; readonly height: number };
}

const WATERMARK_TEXT = 'Lagoon';
const SOFTWARE = 'Lagoon';

export async function encodePicture(bytes: Uint8Array, plan: EncodePlan): Promise<EncodedPicture> {
  // Without withMetadata/keep*, sharp writes no EXIF, XMP, IPTC or ICC from the input: a clean picture.
  const sharp = await loadSharp();
  let pipeline = sharp(bytes).autoOrient();
  if (plan.blurSigma !== undefined) pipeline = pipeline.blur(plan.blurSigma);
  if (plan.watermark) {
    const { width, height } = plan.watermark;
    pipeline = pipeline.composite([{ input: watermarkSvg(width, height), gravity: 'southeast' }]);
  }
  if (plan.metadata) {
    const { prompt, model, seed } = plan.metadata;
    const comment = JSON.stringify({ prompt, model, ...(seed === undefined ? {} : { seed }) });
    pipeline = pipeline
      .withExif({
        IFD0: { ImageDescription: prompt, Software: SOFTWARE, Make: SOFTWARE, Model: model },
        IFD2: { UserComment: comment },
      })
      .withXmp(xmpPacket(prompt, model, seed));
  }
  const quality = plan.quality;
  if (plan.format === 'jpeg') pipeline = pipeline.jpeg(quality === undefined ? {} : { quality });
  else if (plan.format === 'webp') pipeline = pipeline.webp(quality === undefined ? {} : { quality });
  else pipeline = pipeline.png({ compressionLevel: PNG_COMPRESSION_LEVEL });
  const { data, info } = await pipeline.toBuffer({ resolveWithObject: true });
  return { data, info: { width: info.width, height: info.height } };
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
