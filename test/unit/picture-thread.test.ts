import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { encodePicture } from '../../src/providers/image/picture-encode.ts';
import {
  closePictureThread,
  encodeInThread,
  pictureCallsInPlace,
  pictureThreadId,
  renderInThread,
} from '../../src/providers/image/picture-thread.ts';
import { renderPicture } from '../../src/providers/image/simulator-picture.ts';

const request = { prompt: 'a lagoon at dawn', width: 256, height: 192, variants: 1, seed: 7, steps: 20 };

describe('the picture thread', () => {
  it('should draw the same picture as in place, in the thread', async () => {
    const [threaded, inPlace] = await Promise.all([renderInThread(request, 7), renderPicture(request, 7)]);
    expect(Buffer.isBuffer(threaded)).toBe(true);
    expect(threaded.equals(inPlace)).toBe(true);
    expect(pictureCallsInPlace()).toBe(0);
  });

  it('should re-encode as in place: watermark, metadata and format, with the size', async () => {
    const png = await renderPicture(request, 1);
    const plan = {
      format: 'jpeg' as const,
      quality: 70,
      watermark: { width: 256, height: 192 },
      metadata: { prompt: 'a lagoon at dawn', model: 'sim', seed: 1 },
    };
    const [threaded, inPlace] = await Promise.all([encodeInThread(png, plan), encodePicture(png, plan)]);
    expect(threaded.info).toEqual({ width: 256, height: 192 });
    expect(threaded.data.equals(inPlace.data)).toBe(true);
    const meta = await sharp(threaded.data).metadata();
    expect(meta.format).toBe('jpeg');
    expect(meta.exif).toBeDefined();
    expect(pictureCallsInPlace()).toBe(0);
  });

  it('should answer a picture sharp cannot read with its error, not by running it again in place', async () => {
    await expect(encodeInThread(Buffer.from('not a picture'), { format: 'png' })).rejects.toThrow(/unsupported/i);
    expect(pictureCallsInPlace()).toBe(0);
  });

  it('should keep many pictures in flight at once', async () => {
    const seeds = Array.from({ length: 12 }, (_, index) => index);
    const pictures = await Promise.all(
      seeds.map((seed) => renderInThread({ ...request, width: 64, height: 64 }, seed)),
    );
    const sizes = await Promise.all(pictures.map((bytes) => sharp(bytes).metadata()));
    expect(sizes.every((meta) => meta.width === 64 && meta.height === 64 && meta.format === 'png')).toBe(true);
    expect(new Set(pictures.map((bytes) => bytes.toString('base64'))).size).toBe(12);
  });

  it('should re-encode a picture over 4 MB (done in place) like any other', async () => {
    const noise = {
      width: 1400,
      height: 1400,
      channels: 3 as const,
      background: '#000000',
      noise: { type: 'gaussian' as const, mean: 128, sigma: 60 },
    };
    const big = await sharp({ create: noise }).png({ compressionLevel: 0 }).toBuffer();
    expect(big.byteLength).toBeGreaterThan(4 * 1024 * 1024);
    const encoded = await encodeInThread(big, { format: 'webp', quality: 50 });
    expect(encoded.info).toEqual({ width: 1400, height: 1400 });
    expect((await sharp(encoded.data).metadata()).format).toBe('webp');
    expect(pictureCallsInPlace()).toBe(0);
  });

  it('should finish a call in place when the thread is closed under it, and start a new one for the next', async () => {
    const pending = renderInThread({ ...request, width: 1024, height: 1024 }, 3);
    await closePictureThread();
    const [picture, inPlace] = await Promise.all([
      pending,
      renderPicture({ ...request, width: 1024, height: 1024 }, 3),
    ]);
    expect(picture.equals(inPlace)).toBe(true);
    const finishedInPlace = pictureCallsInPlace();
    expect(finishedInPlace).toBeGreaterThan(0);
    // A stop is not a failure: the next picture is drawn in a new thread at once, not in place for a while.
    await renderInThread(request, 4);
    expect(pictureCallsInPlace()).toBe(finishedInPlace);
    expect(pictureThreadId()).toBeDefined();
    await closePictureThread();
  });
});
