import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import sharp from 'sharp';
import { listenLocally } from './local-server.ts';

/*
 * A fake image upstream on 127.0.0.1:<port 0> speaking both protocols the image adapters use:
 * - AUTOMATIC1111/Forge: POST /sdapi/v1/txt2img → `{images: [base64 png…], parameters, info: "<json>"}` (with
 *   `batch_size` pictures; with `grid` set, a grid first and an extension's picture last),
 *   GET /sdapi/v1/prompt-styles → `[{name, prompt}]`.
 * - OpenAI images: POST /v1/images/generations → `{created, data: [{b64_json}]}`.
 * Pictures are solid PNGs of the requested size. Every request is recorded; `queue` answers the next requests
 * with one-off behaviours (a status, a delay, a reset connection, an adult verdict), in order.
 */

export type FakeImageBehavior =
  | { readonly kind: 'status'; readonly status: number }
  | { readonly kind: 'delay'; readonly ms: number }
  | { readonly kind: 'reset' }
  | { readonly kind: 'adult' }
  /** The pictures carry EXIF, XMP and a text chunk (taggedPng), as real engines' often do. */
  | { readonly kind: 'tagged' }
  /** Pictures of noise: a few hundred KB of base64, as real engines' pictures are (noisyPng). */
  | { readonly kind: 'noisy' }
  | { readonly kind: 'malformed' };

export interface FakeImageRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Record<string, unknown> | undefined;
}

export interface FakeImageUpstream {
  readonly url: string;
  readonly requests: FakeImageRequest[];
  styles: string[];
  /** A grid picture before the batch and an extension's picture after it (A1111 with return_grid, ControlNet). */
  grid: boolean;
  queue(...behaviors: FakeImageBehavior[]): void;
  close(): Promise<void>;
}

async function solidPng(width: number, height: number): Promise<string> {
  const picture = sharp({ create: { width, height, channels: 3, background: { r: 40, g: 120, b: 200 } } });
  return (await picture.png().toBuffer()).toString('base64');
}

/** The upstream's picture with metadata that must not reach callers (`{kind: 'tagged'}`), as base64. */
export async function taggedPng(width: number, height: number): Promise<string> {
  const picture = sharp({ create: { width, height, channels: 3, background: { r: 40, g: 120, b: 200 } } })
    .withExif({ IFD0: { ImageDescription: 'upstream prompt', Software: 'fake engine' } })
    .withXmp('<x:xmpmeta xmlns:x="adobe:ns:meta/"><engine>fake upstream xmp</engine></x:xmpmeta>');
  return (await picture.png().toBuffer()).toString('base64');
}

/** A picture of deterministic noise (hardly compressible: its base64 is about 1.4 bytes a pixel), as base64. */
export async function noisyPng(width: number, height: number): Promise<string> {
  const pixels = Buffer.alloc(width * height * 3);
  let state = 12345;
  for (let index = 0; index < pixels.length; index += 1) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    pixels[index] = state >>> 24;
  }
  const picture = sharp(pixels, { raw: { width, height, channels: 3 } });
  return (await picture.png().toBuffer()).toString('base64');
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  if (parts.length === 0) return undefined;
  return JSON.parse(Buffer.concat(parts).toString('utf8')) as Record<string, unknown>;
}

const number = (value: unknown, fallback: number) => (typeof value === 'number' ? value : fallback);

export async function startImageUpstream(): Promise<FakeImageUpstream> {
  const pending: FakeImageBehavior[] = [];
  const requests: FakeImageRequest[] = [];
  const state = { styles: ['Cinematic', 'Watercolour'], grid: false };

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body });
    const behavior = pending.shift();
    if (behavior?.kind === 'reset') {
      req.socket.destroy();
      return;
    }
    if (behavior?.kind === 'delay') await new Promise((resolve) => setTimeout(resolve, behavior.ms));
    if (behavior?.kind === 'status') {
      res.writeHead(behavior.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: `fake failure ${behavior.status}` }));
      return;
    }
    if (behavior?.kind === 'malformed') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"images": "not a list"}');
      return;
    }
    const adult = behavior?.kind === 'adult';
    const png = behavior?.kind === 'tagged' ? taggedPng : behavior?.kind === 'noisy' ? noisyPng : solidPng;
    const send = (value: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (req.method === 'GET' && path === '/sdapi/v1/prompt-styles') {
      send(state.styles.map((name) => ({ name, prompt: `{prompt}, ${name}`, negative_prompt: '' })));
      return;
    }
    if (req.method === 'POST' && path === '/sdapi/v1/txt2img') {
      const count = number(body?.batch_size, 1);
      const picture = await png(number(body?.width, 512), number(body?.height, 512));
      const images = Array.from({ length: count }, () => picture);
      if (state.grid && count > 1) images.unshift(await solidPng(64, 64));
      const info = {
        seed: body?.seed,
        all_seeds: Array.from({ length: count }, (_, i) => number(body?.seed, 1) + i),
        index_of_first_image: images.length - count,
      };
      // An extension's extra picture after the batch (as ControlNet appends its detected maps).
      if (state.grid) images.push(await solidPng(32, 32));
      send({
        images,
        parameters: body,
        info: JSON.stringify(adult ? { ...info, nsfw: Array.from({ length: count }, () => true) } : info),
      });
      return;
    }
    if (req.method === 'POST' && path === '/v1/images/generations') {
      const [width, height] = String(body?.size ?? '512x512')
        .split('x')
        .map(Number);
      const picture = await png(width ?? 512, height ?? 512);
      const data = Array.from({ length: number(body?.n, 1) }, () => ({
        b64_json: picture,
        ...(adult ? { nsfw: true } : {}),
      }));
      send({ created: Math.floor(Date.now() / 1000), data });
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'not found' }));
  }

  const server = createServer((req, res) => {
    answer(req, res).catch(() => res.destroy());
  });
  const { url, close } = await listenLocally(server);
  return {
    url,
    requests,
    get styles() {
      return state.styles;
    },
    set styles(value: string[]) {
      state.styles = value;
    },
    get grid() {
      return state.grid;
    },
    set grid(value: boolean) {
      state.grid = value;
    },
    queue: (...behaviors) => pending.push(...behaviors),
    close,
  };
}
