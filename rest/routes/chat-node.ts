import type { IncomingMessage, ServerResponse } from 'node:http';
import { readNodeStreamLimited } from '../../src/byte-stream.ts';
import type { ChatStreamSession } from '../../src/chat/chat-stream.ts';
import { AppError, PayloadTooLargeError } from '../../src/errors.ts';
import type { Logger } from '../../src/logger.ts';
import type { Services } from '../../src/services.ts';
import { compressJson } from '../compression.ts';
import { balanceHeaders, errorPayload, JSON_DISCARD_LIMIT_BYTES, parseJsonBytes, requireJsonType } from '../http.ts';
import { SSE_DONE, SSE_HEADERS, SSE_INTERNAL_ERROR, sseEvent } from '../sse.ts';
import { chatEventData } from './chat.ts';

export const CHAT_COMPLETIONS_PATH = '/api/v1/chat/completions';

/** Whether a request line's target is the chat completions route (its query string, if any, is not read). */
export function isChatCompletions(method: string | undefined, target: string | undefined): boolean {
  if (method !== 'POST' || !target?.startsWith(CHAT_COMPLETIONS_PATH)) return false;
  const rest = target.slice(CHAT_COMPLETIONS_PATH.length);
  return rest === '' || rest === '/' || rest.startsWith('?') || rest.startsWith('/?');
}

export interface NodeChatContext {
  readonly services: Services;
  readonly logger: Logger;
  readonly maxJsonBytes: number;
  readonly requestId: string;
  /** Sent with every answer (request id, CORS). */
  readonly headers: Readonly<Record<string, string>>;
  /** Told the status when the head is written (metrics, the request log). */
  readonly onHead: (status: number) => void;
}

/** What a request whose client left before its answer counts as (nginx's "client closed request"). */
const CLIENT_CLOSED = 499;

/**
 * POST /api/v1/chat/completions on Node's own request and response. Every paid chat call takes this route, so it
 * skips the Fetch API layer (no Request, Headers, Response or web stream objects per call, one write per answer);
 * it gives the same answers, errors and events as the route in chat.ts, which serves the in-process fetch handler
 * and documents the route. SSE as decisions.md §7, each upstream chunk written as it arrives; a client that goes
 * away aborts the upstream call (settled on what was delivered).
 */
export async function serveChatCompletions(req: IncomingMessage, res: ServerResponse, ctx: NodeChatContext): Promise<void> {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  try {
    const auth = await ctx.services.auth.authenticate({ authorization: req.headers.authorization ?? null }, ctx.requestId);
    requireJsonType(req.headers['content-type']);
    const tooLarge = () => new PayloadTooLargeError(ctx.maxJsonBytes);
    const declared = Number(req.headers['content-length'] ?? Number.NaN);
    if (Number.isFinite(declared) && declared > ctx.maxJsonBytes) throw tooLarge();
    const body = parseJsonBytes(await readNodeStreamLimited(req, ctx.maxJsonBytes, tooLarge, JSON_DISCARD_LIMIT_BYTES));
    const outcome = await ctx.services.chat.create(auth, body, { signal: controller.signal });
    if (outcome.stream) {
      await writeStream(res, outcome.session, ctx);
      return;
    }
    const { completion, charge } = outcome.result;
    const answer = await compressJson(JSON.stringify(completion), req.headers['accept-encoding'], balanceHeaders(charge));
    send(res, 200, answer.body, answer.headers, ctx);
  } catch (error) {
    if (controller.signal.aborted) {
      ctx.onHead(CLIENT_CLOSED);
      return;
    }
    if (!(error instanceof AppError) || error.status >= 500) ctx.logger.error({ reqId: ctx.requestId, err: error, route: `POST ${CHAT_COMPLETIONS_PATH}` }, 'request failed');
    const { status, body, headers } = errorPayload(error, ctx.requestId);
    send(res, status, body, { 'content-type': 'application/json; charset=utf-8', ...headers }, ctx);
  }
}

function send(res: ServerResponse, status: number, body: string | Buffer, headers: Record<string, string>, ctx: NodeChatContext): void {
  ctx.onHead(status);
  if (res.destroyed || res.headersSent) return;
  res.writeHead(status, { ...headers, ...ctx.headers, 'content-length': String(Buffer.byteLength(body)) });
  res.end(body);
}

async function writeStream(res: ServerResponse, session: ChatStreamSession, ctx: NodeChatContext): Promise<void> {
  const events = session[Symbol.asyncIterator]();
  let finished = false;
  res.once('close', () => {
    if (!finished) void events.return?.(undefined);
  });
  ctx.onHead(200);
  res.writeHead(200, { ...SSE_HEADERS, ...ctx.headers });
  res.flushHeaders();
  try {
    for (;;) {
      const next = await events.next();
      if (next.done || res.destroyed) break;
      if (!write(res, sseEvent(chatEventData(next.value)))) await drained(res);
    }
    finished = true;
    res.end(SSE_DONE);
  } catch (error) {
    finished = true;
    ctx.logger.error({ reqId: ctx.requestId, err: error }, 'chat stream failed');
    res.end(SSE_INTERNAL_ERROR + SSE_DONE);
  }
}

/**
 * Writes an event at once; events produced in the same turn of the event loop (several chunks of one upstream
 * read, the last chunk and the usage) leave in one packet instead of one system call each.
 */
function write(res: ServerResponse, text: string): boolean {
  if (res.writableCorked === 0) {
    res.cork();
    process.nextTick(() => res.uncork());
  }
  return res.write(text);
}

const drained = (res: ServerResponse) =>
  new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
