import sharp, { type Region } from 'sharp';
import { describe, expect, it } from 'vitest';
import { postProcess } from '../../src/media/images/post-process.ts';

/** Mean absolute difference of two raw RGB regions. */
async function regionDifference(a: Buffer, b: Buffer, region: Region): Promise<number> {
  const raw = (bytes: Buffer) => sharp(bytes).removeAlpha().extract(region).raw().toBuffer();
  const [left, right] = await Promise.all([raw(a), raw(b)]);
  let sum = 0;
  for (let index = 0; index < left.length; index += 1) sum += Math.abs(left[index]! - right[index]!);
  return sum / left.length;
}

describe('postProcess watermark', () => {
  it('should mark the bottom right corner only, and nothing when the watermark is off', async () => {
    const source = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#335577' } })
      .png()
      .toBuffer();
    const options = { format: 'png', safeMode: true } as const;
    const marked = await postProcess({ bytes: source, adult: false }, { ...options, watermark: true });
    const plain = await postProcess({ bytes: source, adult: false }, { ...options, watermark: false });
    expect([marked.width, marked.height]).toEqual([640, 480]);
    const corner = { left: 520, top: 440, width: 120, height: 40 };
    const topLeft = { left: 0, top: 0, width: 320, height: 240 };
    expect(await regionDifference(marked.bytes, source, corner)).toBeGreaterThan(2);
    expect(await regionDifference(marked.bytes, source, topLeft)).toBe(0);
    expect(await regionDifference(plain.bytes, source, { left: 0, top: 0, width: 640, height: 480 })).toBe(0);
  });

  it('should fit the mark on a picture narrower than the text', async () => {
    const source = await sharp({ create: { width: 40, height: 300, channels: 3, background: '#808080' } })
      .png()
      .toBuffer();
    const marked = await postProcess(
      { bytes: source, adult: false },
      { format: 'webp', watermark: true, safeMode: true },
    );
    expect([marked.width, marked.height]).toEqual([40, 300]);
  });
});
