import sharp from 'sharp';

/*
 * Pictures for the picture-input tests: noisy ones (so their compressed data is long enough to cut in the middle),
 * animated GIFs that are large in frames × pixels and small in bytes, and damaged copies of a picture.
 */

export type PictureFormat = 'png' | 'jpeg' | 'gif' | 'webp';

/** A picture of seeded noise: every run makes the same bytes. */
export function noisyPicture(width: number, height: number, format: PictureFormat): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3);
  let state = 1;
  for (let i = 0; i < pixels.length; i += 1) {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    pixels[i] = (state >>> 16) & 0xff;
  }
  return sharp(pixels, { raw: { width, height, channels: 3 } })
    .toFormat(format)
    .toBuffer();
}

/**
 * An animated GIF of `frames` frames on a width × height canvas: sharp writes the first frame whole (one colour,
 * a few kilobytes), then every further frame is a 1×1 patch at the corner. Each frame is still a whole canvas to a
 * decoder, so 3,000 frames of 4000 × 4000 are 48 billion pixels in about 100 KB.
 */
export async function animatedGif(width: number, height: number, frames: number): Promise<Buffer> {
  const first = await sharp({ create: { width, height, channels: 3, background: '#3366cc' } })
    .gif()
    .toBuffer();
  const u16 = (n: number) => [n & 0xff, (n >> 8) & 0xff];
  const parts: Buffer[] = [first.subarray(0, first.length - 1)]; // without the trailer (0x3b)
  for (let i = 1; i < frames; i += 1) {
    // Graphic control (10 ms), an image descriptor of 1×1 at 0,0 with a 2-colour local table, LZW data
    // (minimum code size 2; codes clear, the pixel, end in 3 bits each), the block terminator.
    const codes = 4 | ((i % 2) << 3) | (5 << 6);
    parts.push(
      Buffer.from([0x21, 0xf9, 4, 0, 1, 0, 0, 0]),
      Buffer.from([0x2c, ...u16(0), ...u16(0), ...u16(1), ...u16(1), 0x80, 0, 0, 0, 255, 255, 255]),
      Buffer.from([2, 2, codes & 0xff, (codes >> 8) & 0xff, 0]),
    );
  }
  parts.push(Buffer.from([0x3b]));
  return Buffer.concat(parts);
}

/** A picture cut to `fraction` of its bytes: the header intact, the image data ends early. */
export const truncated = (picture: Buffer, fraction: number): Buffer =>
  picture.subarray(0, Math.floor(picture.length * fraction));

/** `count` bytes inverted from byte `from` on. */
export function flipped(picture: Buffer, from: number, count = 16): Buffer {
  const copy = Buffer.from(picture);
  for (let i = from; i < Math.min(copy.length, from + count); i += 1) copy[i] = (copy[i] ?? 0) ^ 0xff;
  return copy;
}

/** The picture with its first two bytes (its format's magic number) changed. */
export function wrongMagic(picture: Buffer): Buffer {
  const copy = Buffer.from(picture);
  copy[0] = (copy[0] ?? 0) ^ 0xff;
  copy[1] = (copy[1] ?? 0) ^ 0xff;
  return copy;
}

/** Damaged copies of a picture: cut at several points, bytes flipped in the header and in the data, wrong magic. */
export function damagedCopies(picture: Buffer): { name: string; bytes: Buffer }[] {
  return [
    { name: 'cut at 20%', bytes: truncated(picture, 0.2) },
    { name: 'cut at 60%', bytes: truncated(picture, 0.6) },
    { name: 'cut at 95%', bytes: truncated(picture, 0.95) },
    { name: 'last byte cut', bytes: picture.subarray(0, picture.length - 1) },
    // Past the 8-byte signature: the format is still recognised, its header is not.
    { name: 'bytes flipped in the header', bytes: flipped(picture, 8, 32) },
    { name: 'bytes flipped in the data', bytes: flipped(picture, Math.floor(picture.length / 2)) },
    { name: 'wrong magic', bytes: wrongMagic(picture) },
  ];
}

/** One of the six routes that take a caller's picture, and the request field a refusal names. */
export interface PictureRoute {
  readonly name: string;
  readonly field: string;
  send(picture: Buffer): Promise<Response>;
}

/**
 * The six picture routes over HTTP at `url` (http://host:port) with the key `secret`, each sending the picture under
 * test: JSON with base64 or a multipart upload. Multi-edit sends `other` first, the picture under test second.
 */
export function pictureRoutes(url: string, secret: string, other: Buffer): PictureRoute[] {
  const post = (path: string, body: unknown) =>
    fetch(`${url}/api/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const upload = (path: string, fields: Record<string, string>, picture: Buffer) => {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.set(name, value);
    form.set('image', new Blob([new Uint8Array(picture)], { type: 'image/png' }), 'picture.png');
    return fetch(`${url}/api/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}` },
      body: form,
    });
  };
  return [
    {
      name: 'POST /image/edit (JSON)',
      field: 'image',
      send: (picture) => post('/image/edit', { prompt: 'an otter', image: picture.toString('base64') }),
    },
    {
      name: 'POST /image/edit (multipart)',
      field: 'image',
      send: (picture) => upload('/image/edit', { prompt: 'an otter' }, picture),
    },
    {
      name: 'POST /image/upscale',
      field: 'image',
      send: (picture) => post('/image/upscale', { image: picture.toString('base64'), scale: 2 }),
    },
    {
      name: 'POST /image/multi-edit',
      field: 'images.1',
      send: (picture) =>
        post('/image/multi-edit', {
          prompt: 'an otter',
          images: [other.toString('base64'), picture.toString('base64')],
        }),
    },
    {
      name: 'POST /images/edits',
      field: 'image',
      send: (picture) => upload('/images/edits', { prompt: 'an otter' }, picture),
    },
    {
      name: 'POST /image/background-remove',
      field: 'image',
      send: (picture) => post('/image/background-remove', { image: picture.toString('base64') }),
    },
  ];
}
