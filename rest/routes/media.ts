import { z } from 'zod';
import { NotFoundError } from '../../src/errors.ts';
import type { MediaInfo, MediaStore } from '../../src/media/media-store.ts';
import { MEDIA_PATH } from '../../src/media/media-links.ts';
import type { Operations } from '../../src/services.ts';
import type { HttpRequest } from '../exchange.ts';
import { errorPayload, JSON_TYPE_HEADER, type Reply } from '../http.ts';
import type { Mount } from '../pipeline.ts';
import type { Route } from '../router.ts';

/*
 * GET/HEAD /media/<token>: a media object by its signed URL (src/media/media-links.ts), with no API key: the token
 * is the credential (DELETE with it revokes the URL by deleting the object). Served at the root, where the URLs handed out point, and under /api/v1 as well (the same
 * answer, listed in the OpenAPI document). Unknown, expired, deleted or badly signed: 404 MEDIA_NOT_FOUND, all
 * alike. Single byte ranges (206, 416), so players and download managers can seek and resume.
 */

/** Objects up to this size (or ranges of them) are answered in one write; larger ones are streamed in parts. */
const WHOLE_LIMIT_BYTES = 1_048_576;
const PART_BYTES = 1_048_576;

interface MediaRequest {
  readonly method: string;
  readonly token: string;
  readonly range: string | undefined;
  readonly ifRange: string | undefined;
}

export async function serveMedia(services: Operations, request: MediaRequest, requestId: string): Promise<Reply> {
  const now = new Date();
  const media = await services.media.links.stat(request.token, now);
  if (!media) return notFound(requestId);
  const remaining = Math.min(media.urlExpiresAt.getTime(), media.expiresAt.getTime()) - now.getTime();
  const cacheControl = `private, max-age=${Math.max(0, Math.floor(remaining / 1000))}`;
  return mediaReply(services.media.store, media, request, requestId, { cacheControl });
}

/**
 * DELETE /media/<token>: revokes the URL by deleting the object it names (every other URL of that object stops
 * too, and a job whose media it was answers 404). The token is the credential, as for GET.
 */
export async function revokeMedia(services: Operations, token: string, requestId: string): Promise<Reply> {
  const signed = await services.media.links.verify(token);
  if (!signed || !(await services.media.store.delete(signed.id))) return notFound(requestId);
  return { status: 200, headers: { 'content-type': JSON_TYPE_HEADER }, body: JSON.stringify({ success: true }) };
}

/**
 * The object's bytes as an HTTP answer: whole (200), one range (206) or 416, the head only for HEAD. `afterSent`
 * runs once the last byte of the object has been written (an answer that ends earlier, or a client that went
 * away, does not run it): POST /<kind>/retrieve deletes the media there when asked to.
 */
export async function mediaReply(
  store: MediaStore,
  media: MediaInfo,
  request: Omit<MediaRequest, 'token'>,
  requestId: string,
  options: { cacheControl: string; afterSent?: (() => Promise<void>) | undefined },
): Promise<Reply> {
  const etag = `"${media.id}"`;
  const headers: Record<string, string> = {
    'content-type': media.contentType,
    'accept-ranges': 'bytes',
    'cache-control': options.cacheControl,
    etag,
    // Served from the API's own origin: never sniffed into something else, never run as a page.
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; sandbox",
  };
  // An If-Range that names another version asks for the whole object (objects never change, so only ours matches).
  const wanted = request.ifRange === undefined || request.ifRange === etag ? request.range : undefined;
  const range = parseRange(wanted, media.byteSize);
  if (range === 'unsatisfiable') {
    const body = JSON.stringify({ error: 'Range not satisfiable', code: 'RANGE_NOT_SATISFIABLE' });
    return {
      status: 416,
      headers: { ...headers, 'content-type': JSON_TYPE_HEADER, 'content-range': `bytes */${media.byteSize}` },
      body,
    };
  }
  const start = range?.start ?? 0;
  const length = range ? range.end - range.start + 1 : media.byteSize;
  const status = range ? 206 : 200;
  if (range) headers['content-range'] = `bytes ${range.start}-${range.end}/${media.byteSize}`;
  const afterSent = request.method !== 'HEAD' && start + length === media.byteSize ? options.afterSent : undefined;
  if (request.method === 'HEAD' || length === 0) {
    headers['content-length'] = String(length);
    return { status, headers, stream: empty(afterSent) };
  }
  if (length <= WHOLE_LIMIT_BYTES) {
    const bytes = await store.read(media, start, length);
    // Deleted (or swept) between the description and the bytes.
    if (!bytes || bytes.byteLength !== length) return notFound(requestId);
    if (!afterSent) return { status, headers, body: bytes };
    headers['content-length'] = String(length);
    return { status, headers, stream: parts(store, media, start, length, bytes, afterSent) };
  }
  headers['content-length'] = String(length);
  return { status, headers, stream: parts(store, media, start, length, undefined, afterSent) };
}

async function* empty(afterSent?: () => Promise<void>): AsyncGenerator<Uint8Array> {
  yield* [];
  await afterSent?.();
}

/**
 * The object's bytes part by part, each read as the client takes the previous one (`first`: the part already read).
 * The code after the loop runs only when the client took the last part: a client that went away ends the generator
 * at its `yield`.
 */
async function* parts(
  store: MediaStore,
  media: MediaInfo,
  start: number,
  length: number,
  first: Buffer | undefined,
  afterSent: (() => Promise<void>) | undefined,
) {
  if (first) yield first;
  else
    for (let offset = start; offset < start + length; offset += PART_BYTES) {
      const size = Math.min(PART_BYTES, start + length - offset);
      const part = await store.read(media, offset, size);
      // Gone mid-answer: the connection is cut rather than a short body passed off as the object.
      if (!part || part.byteLength !== size) throw new Error(`media ${media.id} disappeared while being sent`);
      yield part;
    }
  await afterSent?.();
}

function notFound(requestId: string): Reply {
  const { status, body, headers } = errorPayload(new NotFoundError('Media not found', 'MEDIA_NOT_FOUND'), requestId);
  return { status, headers: { 'content-type': JSON_TYPE_HEADER, 'cache-control': 'no-store', ...headers }, body };
}

/**
 * One `bytes=` range (RFC 9110 §14.1.2) resolved against the size: undefined serves the whole object (no Range,
 * a malformed one, or several ranges, which a server may answer whole); 'unsatisfiable' is a 416.
 */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'unsatisfiable' | undefined {
  const match = header && /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match) return undefined;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return undefined;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? Infinity : Number(last);
  if (end < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end: Math.min(end, size - 1) };
}

const header = (req: HttpRequest, name: string): string | undefined => {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** The root mount: `/media/<token>`, GET, HEAD and DELETE (another method is a 405). */
export function mediaMount(services: Operations): Mount {
  return (req, _res, path, requestId) => {
    if (!path.startsWith(MEDIA_PATH)) return undefined;
    const label = '/media/:token';
    const method = req.method ?? 'GET';
    const token = path.slice(MEDIA_PATH.length);
    if (method === 'DELETE') return revokeMedia(services, token, requestId).then((reply) => ({ reply, label }));
    if (method !== 'GET' && method !== 'HEAD') {
      const body = JSON.stringify({ error: `Method ${method.slice(0, 16)} not allowed`, code: 'METHOD_NOT_ALLOWED' });
      const headers = { 'content-type': JSON_TYPE_HEADER, allow: 'GET, HEAD, DELETE' };
      return Promise.resolve({ reply: { status: 405, headers, body }, label });
    }
    const request = { method, token, range: header(req, 'range'), ifRange: header(req, 'if-range') };
    return serveMedia(services, request, requestId).then((reply) => ({ reply, label }));
  };
}

export const mediaRoutes: readonly Route[] = [
  {
    method: 'GET',
    path: '/media/:token',
    access: 'public',
    doc: {
      summary:
        'A media object by its signed URL (no API key: the token is the credential); also served at /media/<token>',
      tags: ['Media'],
      response: z.string().describe('The media bytes, with their Content-Type; Range gives 206 (416 past the end)'),
      responseDescription: 'The media bytes',
    },
    // A HEAD routed here gets GET's answer; the response layer sends its head only, with the same length.
    handler: (call) =>
      serveMedia(
        call.services,
        {
          method: 'GET',
          token: call.params.token ?? '',
          range: call.header('range'),
          ifRange: call.header('if-range'),
        },
        call.requestId,
      ),
  },
  {
    method: 'DELETE',
    path: '/media/:token',
    access: 'public',
    doc: {
      summary:
        'Revoke a signed media URL (a job download_url): the object it names is deleted, every URL of it answers 404',
      tags: ['Media'],
      response: z.object({ success: z.literal(true) }),
    },
    handler: (call) => revokeMedia(call.services, call.params.token ?? '', call.requestId),
  },
];
