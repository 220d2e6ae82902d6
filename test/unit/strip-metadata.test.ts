import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { postProcess } from '../../src/media/images/post-process.ts';
import { stripJpeg, stripPng, stripWebp } from '../../src/media/images/strip-metadata.ts';

/*
 * The pass-through path: an engine's picture that needs no change loses its metadata without being decoded.
 * Every result must still be read by sharp with the same pixels, and carry no EXIF, XMP or text.
 */

type Format = 'png' | 'jpeg' | 'webp';

/** A picture with busy pixels (so a re-encode would show), EXIF, XMP and, when asked, an ICC profile. */
async function tagged(format: Format, options: { icc?: boolean; orientation?: number } = {}): Promise<Buffer> {
  const width = 96;
  const height = 64;
  const pixels = Buffer.alloc(width * height * 3);
  for (let index = 0; index < pixels.length; index += 1) pixels[index] = (index * 7919) % 251;
  let picture = sharp(pixels, { raw: { width, height, channels: 3 } })
    .withExif({ IFD0: { ImageDescription: 'secret prompt', Make: 'Upstream' } })
    .withXmp('<x:xmpmeta xmlns:x="adobe:ns:meta/"><secret>upstream xmp</secret></x:xmpmeta>');
  if (options.icc) picture = picture.withIccProfile('p3');
  if (options.orientation) picture = picture.withMetadata({ orientation: options.orientation });
  return picture.toFormat(format, { quality: 90 }).toBuffer();
}

const raw = (bytes: Buffer) => sharp(bytes).raw().toBuffer();
const strip = { png: stripPng, jpeg: stripJpeg, webp: stripWebp };

describe('metadata stripping without decoding', () => {
  it.each(['png', 'jpeg', 'webp'] as const)(
    'should drop EXIF and XMP from a %s and keep its pixels',
    async (format) => {
      const source = await tagged(format);
      const before = await sharp(source).metadata();
      expect(before.exif).toBeDefined();
      expect(before.xmp).toBeDefined();
      const stripped = strip[format](source)!;
      expect(stripped).toBeDefined();
      const after = await sharp(stripped).metadata();
      expect([after.format, after.width, after.height]).toEqual([format, 96, 64]);
      expect(after.exif).toBeUndefined();
      expect(after.xmp).toBeUndefined();
      expect(stripped.byteLength).toBeLessThan(source.byteLength);
      expect(stripped.includes('secret')).toBe(false);
      // Lossy formats too: the compressed data is copied, so the decoded pixels are the very same.
      expect((await raw(stripped)).equals(await raw(source))).toBe(true);
    },
  );

  it.each(['png', 'jpeg', 'webp'] as const)('should keep the ICC profile of a %s', async (format) => {
    const stripped = strip[format](await tagged(format, { icc: true }))!;
    const meta = await sharp(stripped).metadata();
    expect(meta.icc).toBeDefined();
    expect(meta.exif).toBeUndefined();
  });

  it.each(['png', 'jpeg', 'webp'] as const)('should give a %s without metadata back byte for byte', async (format) => {
    const plain = await sharp({ create: { width: 32, height: 16, channels: 3, background: '#208040' } })
      .toFormat(format)
      .toBuffer();
    expect(strip[format](plain)!.equals(plain)).toBe(true);
  });

  it('should refuse files it cannot follow instead of guessing', () => {
    const garbage = Buffer.from('not a picture at all, just some text');
    expect(stripPng(garbage)).toBeUndefined();
    expect(stripJpeg(garbage)).toBeUndefined();
    expect(stripWebp(garbage)).toBeUndefined();
  });

  it.each(['png', 'jpeg', 'webp'] as const)('should refuse a truncated %s', async (format) => {
    const source = await tagged(format);
    // Cut inside the header segments/chunks: the structure no longer adds up.
    expect(strip[format](source.subarray(0, 30))).toBeUndefined();
  });
});

describe('postProcess pass-through', () => {
  const plain = { watermark: false, safeMode: true } as const;

  it.each(['png', 'jpeg', 'webp'] as const)(
    'should pass a %s needing no change through with only its metadata dropped',
    async (format) => {
      const source = await tagged(format);
      const out = await postProcess({ bytes: source, adult: false }, { ...plain, format });
      expect(out.bytes.equals(strip[format](source)!)).toBe(true);
      expect([out.width, out.height, out.blurred]).toEqual([96, 64, false]);
    },
  );

  it('should re-encode for a format change, the watermark, EXIF or a blur', async () => {
    const source = await tagged('png');
    const stripped = stripPng(source)!;
    const cases = [
      { ...plain, format: 'jpeg' as const },
      { ...plain, format: 'png' as const, watermark: true },
      { ...plain, format: 'png' as const, metadata: { prompt: 'p', model: 'm' } },
    ];
    for (const options of cases) {
      const out = await postProcess({ bytes: source, adult: false }, options);
      expect(out.bytes.equals(stripped)).toBe(false);
    }
    const blurred = await postProcess({ bytes: source, adult: true }, { ...plain, format: 'png' });
    expect(blurred.blurred).toBe(true);
    expect((await raw(blurred.bytes)).equals(await raw(source))).toBe(false);
    const kept = await postProcess({ bytes: source, adult: true }, { ...plain, safeMode: false, format: 'png' });
    expect(kept.bytes.equals(stripped)).toBe(true);
  });

  it('should turn a JPEG its EXIF says is rotated instead of dropping the turn', async () => {
    const source = await tagged('jpeg', { orientation: 6 });
    const out = await postProcess({ bytes: source, adult: false }, { ...plain, format: 'jpeg' });
    const meta = await sharp(out.bytes).metadata();
    expect([meta.width, meta.height, meta.orientation, meta.exif]).toEqual([64, 96, undefined, undefined]);
    expect([out.width, out.height]).toEqual([64, 96]);
  });
});
