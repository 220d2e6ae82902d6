import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthContext } from '../src/auth/auth-context.ts';
import { readNodeStreamLimited } from '../src/byte-stream.ts';
import { AppError, PayloadTooLargeError } from '../src/errors.ts';
import type { Logger } from '../src/logger.ts';
import type { Services } from '../src/services.ts';
import { errorPayload, JSON_DISCARD_LIMIT_BYTES, requireJsonType } from './http.ts';
import { safeDecode } from './router.ts';

/*
 * The hot paid routes (chat completions, the RPC proxy) served on Node's own request and response objects: no
 * Request, Headers, Response or web stream objects per call, and one write per answer. Each gives the same answers
 * and errors as its Fetch-API route in routes/, which serves the in-process fetch handler and documents the route.
 */

export interface NodeRouteContext {
  readonly services: Services;
  readonly logger: Logger;
  readonly maxJsonBytes: number;
  /** The chat body limit (inline images make chat bodies larger than other JSON bodies). */
  readonly maxChatBodyBytes: number;
  readonly requestId: string;
  /** Sent with every answer (request id, CORS). */
  readonly headers: Readonly<Record<string, string>>;
  /** Told the status when the head is written (metrics, the request log). */
  readonly onHead: (status: number) => void;
}

export interface NodeCall {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly ctx: NodeRouteContext;
  readonly auth: AuthContext;
  readonly params: Readonly<Record<string, string>>;
  /** Aborted when the client goes away before its answer is written. */
  readonly signal: AbortSignal;
}

export interface NodeRoute {
  readonly method: 'POST';
  /** The full path with at most one last `:name` segment, e.g. /api/v1/crypto/rpc/:network. */
  readonly path: string;
  /** For metrics and logs, as the router labels its routes. */
  readonly label: string;
  readonly serve: (call: NodeCall) => Promise<void>;
}

/** What a request whose client left before its answer counts as (nginx's "client closed request"). */
const CLIENT_CLOSED = 499;

/** The route and its parameter for a request line, or undefined (then the fetch handler serves it). */
export function matchNodeRoute(
  routes: readonly NodeRoute[],
  method: string | undefined,
  target: string | undefined,
): { route: NodeRoute; params: Record<string, string> } | undefined {
  if (!target) return undefined;
  const query = target.indexOf('?');
  let path = query === -1 ? target : target.slice(0, query);
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  for (const route of routes) {
    if (route.method !== method) continue;
    const colon = route.path.lastIndexOf('/:');
    if (colon === -1) {
      if (path === route.path) return { route, params: {} };
      continue;
    }
    const prefix = route.path.slice(0, colon + 1);
    const value = path.startsWith(prefix) ? path.slice(prefix.length) : '';
    if (value === '' || value.includes('/')) continue;
    return { route, params: { [route.path.slice(colon + 2)]: safeDecode(value) } };
  }
  return undefined;
}

/** Authenticates, runs the route, and answers any error in the error body of docs/api.md. */
export async function serveNodeRoute(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: NodeRouteContext,
  matched: { route: NodeRoute; params: Record<string, string> },
): Promise<void> {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  try {
    const auth = await ctx.services.auth.authenticate(
      { authorization: req.headers.authorization ?? null },
      ctx.requestId,
    );
    await matched.route.serve({ req, res, ctx, auth, params: matched.params, signal: controller.signal });
  } catch (error) {
    if (controller.signal.aborted) {
      ctx.onHead(CLIENT_CLOSED);
      return;
    }
    if (!(error instanceof AppError) || error.status >= 500)
      ctx.logger.error({ reqId: ctx.requestId, err: error, route: matched.route.label }, 'request failed');
    const { status, body, headers } = errorPayload(error, ctx.requestId);
    sendNode(res, ctx, status, body, { 'content-type': 'application/json; charset=utf-8', ...headers });
  }
}

/** The body of a JSON request, within the size limit: 415 for another declared type, 413 past the limit. */
export async function readNodeJsonBytes(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  requireJsonType(req.headers['content-type']);
  const tooLarge = () => new PayloadTooLargeError(limitBytes);
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  if (Number.isFinite(declared) && declared > limitBytes) throw tooLarge();
  return readNodeStreamLimited(req, limitBytes, tooLarge, JSON_DISCARD_LIMIT_BYTES);
}

/** A whole answer in one write, with its length. */
export function sendNode(
  res: ServerResponse,
  ctx: NodeRouteContext,
  status: number,
  body: string | Buffer | Uint8Array,
  headers: Record<string, string>,
): void {
  ctx.onHead(status);
  if (res.destroyed || res.headersSent) return;
  res.writeHead(status, {
    ...headers,
    ...ctx.headers,
    'content-length': String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength),
  });
  res.end(body);
}
