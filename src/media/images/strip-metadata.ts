/*
 * An engine's picture without its metadata (text, EXIF, XMP, comments, times), copied container chunk by
 * container chunk without decoding a pixel: ≈ 2 ms for a 2 MB PNG where a decode + re-encode costs 50–100 ms
 * (bench/RESULTS.md). What changes how the pixels look stays: the palette, transparency, gamma and the colour
 * profile. Each function answers undefined for a file whose structure it does not follow; the caller then
 * re-encodes, which strips everything as well.
 */

export type PassThroughFormat = 'png' | 'jpeg' | 'webp';

/** The picture without metadata, or undefined when it cannot be copied safely (the caller re-encodes). */
export function stripMetadata(format: PassThroughFormat, bytes: Buffer): Buffer | undefined {
  if (format === 'png') return stripPng(bytes);
  if (format === 'jpeg') return stripJpeg(bytes);
  return stripWebp(bytes);
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/**
 * Critical chunks and those that change how pixels look or are shown (pHYs: pixel aspect and density, which every
 * libvips PNG carries); tEXt, zTXt, iTXt, eXIf, tIME and the rest go.
 */
const PNG_KEEP = new Set(['IHDR', 'PLTE', 'IDAT', 'IEND', 'tRNS', 'gAMA', 'cHRM', 'sRGB', 'iCCP', 'sBIT', 'pHYs']);

export function stripPng(png: Buffer): Buffer | undefined {
  if (png.byteLength < 8 || !png.subarray(0, 8).equals(PNG_SIGNATURE)) return undefined;
  const parts: Buffer[] = [png.subarray(0, 8)];
  let dropped = false;
  for (let at = 8; ;) {
    if (at + 12 > png.byteLength) return undefined; // ended before IEND
    const end = at + 12 + png.readUInt32BE(at);
    if (end > png.byteLength) return undefined;
    const type = png.toString('latin1', at + 4, at + 8);
    if (PNG_KEEP.has(type)) parts.push(png.subarray(at, end));
    else dropped = true;
    // A PNG with nothing to drop is answered as it is: no copy of its megabytes.
    if (type === 'IEND') return dropped || end < png.byteLength ? Buffer.concat(parts) : png;
    at = end;
  }
}

/**
 * JPEG: the segments before the scan, less APP1 (EXIF, XMP), APP3–APP13 and APP15 (IPTC and vendors' blocks) and
 * comments. Kept: APP0 (JFIF), APP2 only as an ICC profile, APP14 (Adobe: says how to read the colour channels).
 * From the start of the scan on, the bytes are copied as they are.
 */
export function stripJpeg(jpeg: Buffer): Buffer | undefined {
  if (jpeg.byteLength < 4 || jpeg[0] !== 0xff || jpeg[1] !== 0xd8) return undefined;
  const parts: Buffer[] = [jpeg.subarray(0, 2)];
  let dropped = false;
  let at = 2;
  for (;;) {
    while (jpeg[at] === 0xff && jpeg[at + 1] === 0xff) at += 1; // fill bytes
    if (at + 4 > jpeg.byteLength || jpeg[at] !== 0xff) return undefined;
    const marker = jpeg[at + 1]!;
    if (marker === 0xda) {
      if (!dropped) return jpeg;
      parts.push(jpeg.subarray(at));
      return Buffer.concat(parts);
    }
    if (marker === 0xd9 || (marker >= 0xd0 && marker <= 0xd8) || marker === 0x01) return undefined;
    const end = at + 2 + jpeg.readUInt16BE(at + 2);
    if (end > jpeg.byteLength) return undefined;
    if (keepJpegSegment(marker, jpeg.subarray(at + 4, end))) parts.push(jpeg.subarray(at, end));
    else dropped = true;
    at = end;
  }
}

function keepJpegSegment(marker: number, payload: Buffer): boolean {
  if (marker === 0xfe) return false; // COM
  if (marker < 0xe0 || marker > 0xef) return true; // tables, frame header, restart interval
  if (marker === 0xe0 || marker === 0xee) return true; // JFIF, Adobe
  if (marker === 0xe2) return payload.toString('latin1', 0, 12) === 'ICC_PROFILE\0';
  return false;
}

/** WebP: the RIFF chunks less EXIF and XMP, the VP8X flags saying so, and the RIFF size fixed. */
export function stripWebp(webp: Buffer): Buffer | undefined {
  if (webp.byteLength < 20 || webp.toString('latin1', 0, 4) !== 'RIFF' || webp.toString('latin1', 8, 12) !== 'WEBP')
    return undefined;
  const end = 8 + webp.readUInt32LE(4);
  if (end > webp.byteLength) return undefined;
  const parts: Buffer[] = [];
  let dropped = false;
  let vp8x: Buffer | undefined;
  for (let at = 12; at < end;) {
    if (at + 8 > end) return undefined;
    const type = webp.toString('latin1', at, at + 4);
    const size = webp.readUInt32LE(at + 4);
    const next = at + 8 + size + (size % 2); // chunks are padded to an even size
    if (next > end) return undefined;
    if (type === 'VP8X') {
      vp8x = Buffer.from(webp.subarray(at, next)); // a copy: its flags change
      parts.push(vp8x);
    } else if (type !== 'EXIF' && type !== 'XMP ') parts.push(webp.subarray(at, next));
    else dropped = true;
    at = next;
  }
  if (!dropped && end === webp.byteLength) return webp;
  // VP8X flags: 0x08 EXIF, 0x04 XMP.
  if (vp8x && vp8x.byteLength > 8) vp8x[8] = vp8x[8]! & ~0x0c;
  const body = Buffer.concat(parts);
  const header = Buffer.alloc(12);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(body.byteLength + 4, 4);
  header.write('WEBP', 8, 'latin1');
  return Buffer.concat([header, body]);
}
