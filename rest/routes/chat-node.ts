import type { ServerResponse } from 'node:http';
import type { ChatStreamSession } from '../../src/chat/chat-stream.ts';
import { compressJson } from '../compression.ts';
import { balanceHeaders, parseJsonBytes } from '../http.ts';
import { readNodeJsonBytes, sendNode, type NodeRoute, type NodeRouteContext } from '../node-route.ts';
import { SSE_DONE, SSE_HEADERS, SSE_INTERNAL_ERROR, sseEvent } from '../sse.ts';
import { chatCompletionBody, chatEventData } from './chat.ts';

/**
 * POST /api/v1/chat/completions on Node's objects (node-route.ts): the same answers as chat.ts. SSE as in
 * sse.ts, each upstream chunk written as it arrives; a client that goes away aborts the upstream call, which is then
 * settled on what was delivered.
 */
export const chatNodeRoute: NodeRoute = {
  method: 'POST',
  path: '/api/v1/chat/completions',
  label: 'POST /api/v1/chat/completions',
  async serve({ req, res, ctx, auth, signal }) {
    const body = parseJsonBytes(await readNodeJsonBytes(req, ctx.maxChatBodyBytes));
    const outcome = await ctx.services.chat.create(auth, body, { signal });
    if (outcome.stream) {
      await writeStream(res, outcome.session, ctx);
      return;
    }
    const { completion, charge } = outcome.result;
    const answer = await compressJson(
      chatCompletionBody(completion),
      req.headers['accept-encoding'],
      balanceHeaders(charge),
    );
    sendNode(res, ctx, 200, answer.body, answer.headers);
  },
};

async function writeStream(res: ServerResponse, session: ChatStreamSession, ctx: NodeRouteContext): Promise<void> {
  const events = session[Symbol.asyncIterator]();
  let finished = false;
  res.once('close', () => {
    if (!finished) void events.return?.(undefined);
  });
  ctx.onHead(200);
  res.writeHead(200, { ...SSE_HEADERS, ...ctx.headers });
  // The head leaves with the first event, one packet instead of two: a session starts once the upstream's first
  // chunk is in, so that event is ready within this turn. If it is not (a chunk with nothing to forward), the head
  // goes alone at the next turn, so the client still sees the stream open at once.
  const head = setImmediate(() => {
    if (!res.destroyed) res.flushHeaders();
  });
  try {
    for (;;) {
      const next = await events.next();
      if (next.done || res.destroyed) break;
      clearImmediate(head); // no-op after the first event
      if (!write(res, sseEvent(chatEventData(next.value)))) await drained(res);
    }
    finished = true;
    res.end(SSE_DONE);
  } catch (error) {
    finished = true;
    ctx.logger.error({ reqId: ctx.requestId, err: error }, 'chat stream failed');
    res.end(SSE_INTERNAL_ERROR + SSE_DONE);
  } finally {
    clearImmediate(head);
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
