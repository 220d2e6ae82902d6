import { z } from 'zod';
import { NotFoundError } from '../../src/errors.ts';
import type { MediaInfo } from '../../src/media/media-store.ts';
import { MEDIA_PATH } from '../../src/media/media-links.ts';
import type { Operations } from '../../src/services.ts';
import type { HttpRequest } from '../exchange.ts';
import { errorPayload, JSON_TYPE_HEADER, type Reply } from '../http.ts';
import type { Mount } from '../pipeline.ts';
import type { Route } from '../router.ts';

/*
 * GET/HEAD /media/<token>: a media object by its signed URL (src/media/media-links.ts), with no API key: the token
 * is the credential. Served at the root, where the URLs handed out point, and under /api/v1 as well (the same
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
  const { store, links } = services.media;
  const now = new Date();
  const media = await links.stat(request.token, now);
  if (!media) return notFound(requestId);
  const remaining = Math.min(media.urlExpiresAt.getTime(), media.expiresAt.getTime()) - now.getTime();
  const etag = `"${media.id}"`;
  const headers: Record<string, string> = {
    'content-type': media.contentType,
    'accept-ranges': 'bytes',
    'cache-control': `private, max-age=${Math.max(0, Math.floor(remaining / 1000))}`,
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
  if (request.method === 'HEAD' || length === 0) {
    headers['content-length'] = String(length);
    return { status, headers, stream: empty() };
  }
  if (length <= WHOLE_LIMIT_BYTES) {
    const bytes = await store.read(media.id, start, length);
    // Deleted (or swept) between the description and the bytes.
    if (!bytes || bytes.byteLength !== length) return notFound(requestId);
    return { status, headers, body: bytes };
  }
  headers['content-length'] = String(length);
  return { status, headers, stream: parts(services, media, start, length) };
}

async function* empty(): AsyncGenerator<Uint8Array> {}

/** The object's bytes part by part, each read as the client takes the previous one. */
async function* parts(services: Operations, media: MediaInfo, start: number, length: number) {
  for (let offset = start; offset < start + length; offset += PART_BYTES) {
    const size = Math.min(PART_BYTES, start + length - offset);
    const part = await services.media.store.read(media.id, offset, size);
    // Gone mid-answer: the connection is cut rather than a short body passed off as the object.
    if (!part || part.byteLength !== size) throw new Error(`media ${media.id} disappeared while being sent`);
    yield part;
  }
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

/** The root mount: `/media/<token>`, GET and HEAD (another method is a 405). */
export function mediaMount(services: Operations): Mount {
  return (req, _res, path, requestId) => {
    if (!path.startsWith(MEDIA_PATH)) return undefined;
    const label = '/media/:token';
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') {
      const body = JSON.stringify({ error: `Method ${method.slice(0, 16)} not allowed`, code: 'METHOD_NOT_ALLOWED' });
      const headers = { 'content-type': JSON_TYPE_HEADER, allow: 'GET, HEAD' };
      return Promise.resolve({ reply: { status: 405, headers, body }, label });
    }
    const token = path.slice(MEDIA_PATH.length);
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
];
