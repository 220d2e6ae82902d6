import sharp from 'sharp';
import { postProcess } from '../src/media/images/post-process.ts';
import { stripPng } from '../src/media/images/strip-metadata.ts';

/*
 * The media benchmark's picture, and the steps one picture takes on Lagoon's side of an image call, timed one by
 * one in this process: what dominates Lagoon's added latency for a 1024×1024 PNG.
 */

export const SIZE = 1024;

/** A smooth gradient with fine noise: it compresses about as badly as a real generated picture. */
export function benchPixels(): Buffer {
  const pixels = Buffer.alloc(SIZE * SIZE * 3);
  let state = 0x2545f491;
  for (let y = 0; y < SIZE; y += 1) {
    for (let x = 0; x < SIZE; x += 1) {
      state = (state * 1_103_515_245 + 12_345) >>> 0;
      const noise = (state >>> 24) % 6;
      const i = (y * SIZE + x) * 3;
      pixels[i] = (x >> 2) + noise;
      pixels[i + 1] = (y >> 2) + noise;
      pixels[i + 2] = ((x + y) >> 3) + noise;
    }
  }
  return pixels;
}

export const benchPng = (): Promise<Buffer> =>
  sharp(benchPixels(), { raw: { width: SIZE, height: SIZE, channels: 3 } })
    .png()
    .toBuffer();

const WATERMARK = Buffer.from(
  `<svg xmlns="http://www.w3.org/2000/svg" width="160" height="28"><text x="4" y="20" font-size="16" fill="white" fill-opacity="0.6">Lagoon</text></svg>`,
);

async function median(runs: number, step: () => unknown): Promise<number> {
  const times: number[] = [];
  await step(); // warm
  for (let i = 0; i < runs; i += 1) {
    const started = performance.now();
    await step();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? 0;
}

/** Markdown table lines: each step's median time for one 1024×1024 PNG. */
export async function profileImagePath(runs: number): Promise<string[]> {
  const png = await benchPng();
  const upstreamBody = JSON.stringify({ created: 1, data: [{ b64_json: png.toString('base64') }] });
  const b64 = png.toString('base64');
  const processed = await sharp(png)
    .composite([{ input: WATERMARK, gravity: 'southeast' }])
    .png()
    .toBuffer();
  const processedB64 = processed.toString('base64');
  const steps: [string, () => unknown][] = [
    [`JSON.parse of the upstream answer (${mb(upstreamBody.length)} MB)`, () => JSON.parse(upstreamBody)],
    ['base64 decode of the upstream picture', () => Buffer.from(b64, 'base64')],
    ['sharp: read the header (metadata)', () => sharp(png).metadata()],
    ['sharp: PNG decode only (to raw pixels)', () => sharp(png).raw().toBuffer()],
    [
      'postProcess: PNG, no watermark, no metadata (a remote engine by default: pass-through)',
      () => postProcess({ bytes: png, adult: false }, { format: 'png', watermark: false, safeMode: true }),
    ],
    [
      'postProcess: PNG, watermark (re-encoded at PNG_COMPRESSION_LEVEL)',
      () => postProcess({ bytes: png, adult: false }, { format: 'png', watermark: true, safeMode: true }),
    ],
    [
      'postProcess: PNG, watermark, prompt/model/seed in EXIF and XMP',
      () =>
        postProcess(
          { bytes: png, adult: false },
          { format: 'png', watermark: true, safeMode: true, metadata: { prompt: 'a lighthouse', model: 'm', seed: 7 } },
        ),
    ],
    ['stripPng: the PNG with its metadata chunks dropped, no decode', () => stripPng(png)],
    ['sharp: decode + PNG encode, no watermark (compression 6)', () => sharp(png).png().toBuffer()],
    [
      'sharp: decode + small corner SVG watermark + PNG encode (compression 6)',
      () =>
        sharp(png)
          .composite([{ input: WATERMARK, gravity: 'southeast' }])
          .png()
          .toBuffer(),
    ],
    [
      'sharp: decode + watermark + PNG encode, compression 1',
      () =>
        sharp(png)
          .composite([{ input: WATERMARK, gravity: 'southeast' }])
          .png({ compressionLevel: 1 })
          .toBuffer(),
    ],
    [
      'sharp: decode + watermark + WebP encode (quality 80)',
      () =>
        sharp(png)
          .composite([{ input: WATERMARK, gravity: 'southeast' }])
          .webp({ quality: 80 })
          .toBuffer(),
    ],
    [`base64 encode of the answer picture (${mb(processed.byteLength)} MB)`, () => processed.toString('base64')],
    // Both to bytes, as the answer is written: a concatenated string is a rope until it is flattened.
    [
      'JSON.stringify of the answer, to bytes',
      () => Buffer.from(JSON.stringify({ created: 1, data: [{ b64_json: processedB64 }] })),
    ],
    // base64 has no character JSON escapes, so the string can be spliced in as it is.
    [
      'the same JSON built by concatenation, to bytes',
      () => Buffer.from(`{"created":1,"data":[{"b64_json":"${processedB64}"}]}`),
    ],
    [
      'the same JSON as bytes: head + base64 (latin1) + tail, from the picture',
      () =>
        Buffer.concat([
          Buffer.from('{"created":1,"data":[{"b64_json":"'),
          Buffer.from(processed.toString('base64'), 'latin1'),
          Buffer.from('"}]}'),
        ]),
    ],
  ];
  const lines = ['| step | median ms |', '|---|---:|'];
  for (const [label, step] of steps) lines.push(`| ${label} | ${(await median(runs, step)).toFixed(2)} |`);
  return lines;
}

const mb = (bytes: number) => (bytes / 1_048_576).toFixed(2);
