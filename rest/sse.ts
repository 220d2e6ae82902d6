import type { HttpResponse } from './exchange.ts';
import type { ChunkSource, Reply } from './http.ts';

/*
 * Server-sent events for OpenAI-style streams (docs/api.md): one `data: <json>` per event, a blank line
 * between, `data: [DONE]` at the end. Events are pulled from the source one at a time as the client reads, so
 * nothing is buffered: each one is written the moment it exists.
 */

export const SSE_DONE = 'data: [DONE]\n\n';

/** One SSE event carrying `data` as JSON. */
export const sseEvent = (data: unknown): string => `data: ${JSON.stringify(data)}\n\n`;

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  // Reverse proxies (nginx) must not hold events back.
  'x-accel-buffering': 'no',
};

/** The event sent when the source itself throws (a bug, not an upstream failure): it never leaks internals. */
export const SSE_INTERNAL_ERROR = sseEvent({ error: { message: 'An unknown error occurred', code: 'INTERNAL_ERROR' } });

/**
 * An SSE answer over `source`; `toData` gives each event's JSON payload. When the client goes away the source's
 * `return()` is called (a chat stream then cancels its upstream request and settles on what was delivered).
 */
export function sse<T>(source: AsyncIterable<T>, toData: (event: T) => unknown): Reply {
  return { status: 200, headers: { ...SSE_HEADERS }, events: { source, toData } };
}

/**
 * Writes an SSE stream; `onError` hears a source that throws (the client then gets SSE_INTERNAL_ERROR). A client
 * gone (`gone`, the pipeline's signal) ends the source.
 */
export async function writeEvents(
  res: HttpResponse,
  gone: AbortSignal,
  source: AsyncIterable<unknown>,
  toData: (event: never) => unknown,
  onError: (error: unknown) => void,
): Promise<void> {
  const events = source[Symbol.asyncIterator]();
  const data = toData as (event: unknown) => unknown;
  let finished = false;
  onAbort(gone, () => {
    if (!finished) void events.return?.(undefined);
  });
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
      if (!corkedWrite(res, sseEvent(data(next.value)))) await drained(res);
    }
    finished = true;
    res.end(SSE_DONE);
  } catch (error) {
    finished = true;
    onError(error);
    res.end(SSE_INTERNAL_ERROR + SSE_DONE);
  } finally {
    clearImmediate(head);
  }
}

/**
 * Writes a body chunk by chunk as the client reads it; a client that goes away ends the source, a source that fails
 * cuts the connection (a chunked body then never ends cleanly).
 */
export async function writeChunks(
  res: HttpResponse,
  gone: AbortSignal,
  source: ChunkSource,
  writeAheadBytes = 0,
): Promise<void> {
  const chunks = (source as AsyncIterable<string | Uint8Array>)[Symbol.asyncIterator]();
  let finished = false;
  onAbort(gone, () => {
    if (!finished) void chunks.return?.(undefined);
  });
  let broken = false;
  try {
    for (;;) {
      const next = await chunks.next();
      if (next.done) break;
      if (res.destroyed) {
        // A client gone before the source started (while the handler ran) ends it here.
        void chunks.return?.(undefined);
        break;
      }
      if (!corkedWrite(res, next.value) && res.writableLength > writeAheadBytes) await drained(res);
    }
  } catch (error) {
    // A body that broke off must not look complete to the client: cut the connection rather than end the body.
    broken = true;
    res.destroy(error instanceof Error ? error : new Error(String(error)));
    throw error;
  } finally {
    finished = true;
    if (!broken) res.end();
  }
}

/**
 * Writes at once; writes made in the same turn of the event loop (several chunks of one upstream read, the last
 * chunk and the usage) leave in one packet instead of one system call each.
 */
function corkedWrite(res: HttpResponse, chunk: string | Uint8Array): boolean {
  if (res.writableCorked === 0) {
    res.cork();
    process.nextTick(() => res.uncork());
  }
  return res.write(chunk);
}

export const drained = (res: HttpResponse) =>
  new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });

/**
 * Runs `then` when the client goes away from now on. One gone already is left to the writing loop, which finds the
 * response destroyed after the source's first step: a source ended before it started would skip its own cleanup.
 */
function onAbort(signal: AbortSignal, then: () => void): void {
  signal.addEventListener('abort', then, { once: true });
}
