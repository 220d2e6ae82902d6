import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import sharp from 'sharp';
import { listenLocally } from './local-server.ts';

/*
 * Local stand-ins for remote image engines on 127.0.0.1, speaking their protocols:
 * - OpenAI images API: POST /v1/images/edits (multipart: model, prompt, image, mask?, size, response_format)
 *   → { created, data: [{ b64_json }] }.
 * - AUTOMATIC1111/Forge: POST /sdapi/v1/img2img { init_images, mask?, prompt, width, height, … } → { images, info },
 *   POST /sdapi/v1/extra-single-image { image, upscaling_resize, upscaler_1 } → { image, html_info }.
 * Answers are real pictures (solid colour at the asked size), so the service's post-processing runs on them.
 */

export interface ImageUpstreamRequest {
  readonly path: string;
  readonly contentType: string;
  /** JSON bodies parsed; multipart bodies as text fields plus the file parts' sizes. */
  readonly body: Record<string, unknown>;
}

export type ImageOverride = (request: IncomingMessage, response: ServerResponse) => void;

export interface FakeImageUpstream {
  readonly url: string;
  readonly requests: ImageUpstreamRequest[];
  queue(...overrides: ImageOverride[]): void;
  close(): Promise<void>;
}

export const failWith =
  (code: number): ImageOverride =>
  (_request, response) => {
    response.writeHead(code, { 'content-type': 'application/json' }).end('{"error":"upstream failure"}');
  };

/** Never answers (the caller's timeout fires first); the socket is destroyed at close. */
export const hang = (): ImageOverride => () => undefined;

const solid = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 20, g: 120, b: 200 } } })
    .png()
    .toBuffer();

export async function startImageUpstream(): Promise<FakeImageUpstream> {
  const requests: ImageUpstreamRequest[] = [];
  const overrides: ImageOverride[] = [];
  const server = bodyServer(async (request, raw, response) => {
    const contentType = request.headers['content-type'] ?? '';
    const path = request.url ?? '/';
    const body = contentType.startsWith('multipart/')
      ? await multipartFields(raw, contentType)
      : (JSON.parse(raw.toString('utf8') || '{}') as Record<string, unknown>);
    requests.push({ path, contentType, body });
    const override = overrides.shift();
    if (override) return override(request, response);
    const send = (value: unknown) =>
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    if (path === '/v1/images/edits') {
      const [width, height] = String(body.size ?? '1024x1024')
        .split('x')
        .map(Number);
      const nsfw = String(body.prompt).includes('[adult]');
      return send({
        created: 1,
        data: [{ b64_json: (await solid(width ?? 64, height ?? 64)).toString('base64'), ...(nsfw && { nsfw: true }) }],
      });
    }
    if (path === '/sdapi/v1/img2img') {
      const image = await solid(Number(body.width), Number(body.height));
      return send({ images: [image.toString('base64')], info: JSON.stringify({ nsfw: [false] }) });
    }
    if (path === '/sdapi/v1/extra-single-image') {
      const input = Buffer.from(String(body.image), 'base64');
      const meta = await sharp(input).metadata();
      const scale = Number(body.upscaling_resize);
      const image = await solid(Math.round((meta.width ?? 1) * scale), Math.round((meta.height ?? 1) * scale));
      return send({ image: image.toString('base64'), html_info: '' });
    }
    response.writeHead(404).end();
  });
  const { url, close } = await listenLocally(server);
  return { url, requests, queue: (...more) => overrides.push(...more), close };
}

/** The text fields of a multipart body, and `<name>Bytes` for each file part (parsed with the Fetch API). */
async function multipartFields(raw: Buffer, contentType: string): Promise<Record<string, unknown>> {
  const form = await formOf(raw, contentType);
  const out: Record<string, unknown> = {};
  for (const [name, value] of form.entries()) {
    if (typeof value === 'string') out[name] = value;
    else out[`${name}Bytes`] = value.size;
  }
  return out;
}

/** A background-removal engine in rembg's style (POST, the picture as the multipart `file` part). */
export interface FakeBackgroundRemover {
  readonly url: string;
  /** The size in bytes of each request body received. */
  readonly received: number[];
  /** While set, every request is answered 500. */
  failing: boolean;
  close(): Promise<void>;
}

/**
 * Answers each picture with a fully transparent WebP of the picture's size (Lagoon hands it on as PNG): the route's
 * input, billing and answer paths without the local model's seconds of CPU (test/rest/background-removal.test.ts
 * runs that model itself).
 */
export async function startBackgroundRemover(): Promise<FakeBackgroundRemover> {
  const received: number[] = [];
  const server = bodyServer(async (request, raw, response) => {
    received.push(raw.length);
    if (remover.failing) return response.writeHead(500).end('boom');
    const file = (await formOf(raw, request.headers['content-type'] ?? '')).get('file');
    if (!(file instanceof Blob)) return response.writeHead(400).end('no file part');
    const { width = 1, height = 1 } = await sharp(Buffer.from(await file.arrayBuffer())).metadata();
    const cutOut = await sharp({ create: { width, height, channels: 4, background: { r: 9, g: 9, b: 9, alpha: 0 } } })
      .webp()
      .toBuffer();
    response.writeHead(200, { 'content-type': 'image/webp' }).end(cutOut);
  });
  const { url, close } = await listenLocally(server);
  const remover: FakeBackgroundRemover = { url: `${url}/api/remove`, received, failing: false, close };
  return remover;
}

/** An HTTP server that hands `handle` each request's whole body; a handler that throws answers 500. */
function bodyServer(
  handle: (request: IncomingMessage, body: Buffer, response: ServerResponse) => Promise<unknown>,
): Server {
  return createServer((request, response) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      await handle(request, Buffer.concat(chunks), response);
    })().catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500).end(String(error));
    });
  });
}

/** A multipart body's parts, parsed with the Fetch API. */
function formOf(body: Buffer, contentType: string): Promise<FormData> {
  return new Response(new Uint8Array(body), { headers: { 'content-type': contentType } }).formData();
}
