import sharp, { type Region } from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { stripPng } from '../../src/media/images/strip-metadata.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { useImageApp } from '../helpers/image-app.ts';
import { taggedPng, type FakeImageUpstream } from '../helpers/image-upstreams.ts';

/*
 * The watermark is the operator's choice per model (`watermark` in the model config): by default on for the
 * simulator's pictures and off for a real engine's, whose pictures then pass through without a re-encode, only
 * their metadata dropped. `hide_watermark: true` always removes it.
 */

/** Mean absolute difference of a region of two pictures' pixels. */
async function difference(a: Buffer, b: Buffer, region: Region): Promise<number> {
  const raw = (bytes: Buffer) => sharp(bytes).removeAlpha().extract(region).raw().toBuffer();
  const [left, right] = await Promise.all([raw(a), raw(b)]);
  let sum = 0;
  for (let index = 0; index < left.length; index += 1) sum += Math.abs(left[index]! - right[index]!);
  return sum / left.length;
}

const SIZE = { width: 512, height: 512 };
/** Where the mark goes (bottom right) and a part of the picture it never touches. */
const CORNER = { left: 384, top: 472, width: 128, height: 40 };
const MIDDLE = { left: 128, top: 128, width: 256, height: 256 };

describe(`REST image generation: watermark per model and pass-through (${testDatabaseKind})`, () => {
  const app = useImageApp(10);
  const { generateJson } = app;
  let upstream: FakeImageUpstream;
  beforeAll(() => {
    ({ upstream } = app.state);
  });
  const picture = async (body: Record<string, unknown>) => {
    const { status, body: answer } = await generateJson({ format: 'png', seed: 5, ...SIZE, ...body });
    expect(status).toBe(200);
    return Buffer.from(answer.images[0]!, 'base64');
  };

  it("should pass a remote engine's PNG through unmarked, its bytes kept and its metadata dropped", async () => {
    upstream.queue({ kind: 'tagged' });
    const answer = await picture({ model: 'test-a1111-image', prompt: 'a quay' });
    const sent = Buffer.from(await taggedPng(SIZE.width, SIZE.height), 'base64');
    expect((await sharp(sent).metadata()).exif).toBeDefined();
    const meta = await sharp(answer).metadata();
    expect([meta.format, meta.width, meta.height, meta.exif, meta.xmp]).toEqual([
      'png',
      512,
      512,
      undefined,
      undefined,
    ]);
    // Not decoded and re-encoded: the very chunks the engine sent, less its metadata.
    expect(answer.equals(stripPng(sent)!)).toBe(true);
    expect(await difference(answer, sent, { left: 0, top: 0, ...SIZE })).toBe(0);
  });

  it('should mark a remote model the operator set `watermark: true` for, unless the caller hides it', async () => {
    const sent = Buffer.from(await taggedPng(SIZE.width, SIZE.height), 'base64');
    upstream.queue({ kind: 'tagged' });
    const marked = await picture({ model: 'test-a1111-marked', prompt: 'a quay' });
    expect(await difference(marked, sent, CORNER)).toBeGreaterThan(2);
    expect(await difference(marked, sent, MIDDLE)).toBe(0);
    expect((await sharp(marked).metadata()).exif).toBeUndefined();
    upstream.queue({ kind: 'tagged' });
    const hidden = await picture({ model: 'test-a1111-marked', prompt: 'a quay', hide_watermark: true });
    expect(hidden.equals(stripPng(sent)!)).toBe(true);
  });

  it("should mark the simulator's pictures by default; hide_watermark and `watermark: false` remove it", async () => {
    const request = { model: 'test-pixel-image', prompt: 'a lighthouse' };
    const marked = await picture(request);
    const hidden = await picture({ ...request, hide_watermark: true });
    // The same seed and prompt: the same picture but for the corner.
    expect(await difference(marked, hidden, CORNER)).toBeGreaterThan(2);
    expect(await difference(marked, hidden, MIDDLE)).toBe(0);
    const unmarked = await picture({ ...request, model: 'test-sim-unmarked' });
    expect(await difference(unmarked, hidden, { left: 0, top: 0, ...SIZE })).toBe(0);
    const unmarkedHidden = await picture({ ...request, model: 'test-sim-unmarked', hide_watermark: true });
    expect(unmarkedHidden.equals(unmarked)).toBe(true);
  });

  it('should re-encode a remote picture only for what the call asks: another format, EXIF', async () => {
    upstream.queue({ kind: 'tagged' });
    const webp = await picture({ model: 'test-a1111-image', prompt: 'a quay', format: 'webp' });
    expect((await sharp(webp).metadata()).format).toBe('webp');
    upstream.queue({ kind: 'tagged' });
    const tagged = await picture({ model: 'test-a1111-image', prompt: 'a quay', embed_exif_metadata: true });
    const exif = (await sharp(tagged).metadata()).exif!;
    expect(exif.includes('a quay')).toBe(true);
    expect(exif.includes('upstream prompt')).toBe(false);
  });

  it("should show an operator's `watermark` in the model's spec", async () => {
    const response = await app.state.t.call('/api/v1/models?type=image');
    const { data } = (await response.json()) as { data: { id: string; model_spec: Record<string, unknown> }[] };
    const spec = (id: string) => data.find((model) => model.id === id)?.model_spec;
    expect(spec('test-a1111-marked')?.watermark).toBe(true);
    expect(spec('test-sim-unmarked')?.watermark).toBe(false);
    expect(spec('test-a1111-image')).not.toHaveProperty('watermark');
  });
});
