/*
 * Server-sent events for OpenAI-style streams (docs/api.md): one `data: <json>` per event, a blank line
 * between, `data: [DONE]` at the end. Events are pulled from the source one at a time as the client reads, so
 * nothing is buffered: each one is written the moment it exists.
 */

const encoder = new TextEncoder();
export const SSE_DONE = 'data: [DONE]\n\n';
const DONE = encoder.encode(SSE_DONE);

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
 * An SSE response over `source`. `toData` gives each event's JSON payload. When the client goes away the
 * source's `return()` is called (a chat stream then cancels its upstream request and settles).
 */
export function sseResponse<T>(
  source: AsyncIterable<T>,
  toData: (event: T) => unknown,
  headers: Record<string, string> = {},
  onInternalError?: (error: unknown) => void,
): Response {
  const iterator = source[Symbol.asyncIterator]();
  let finished = false;
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const next = await iterator.next();
          if (next.done) {
            finished = true;
            controller.enqueue(DONE);
            controller.close();
            return;
          }
          controller.enqueue(encoder.encode(sseEvent(toData(next.value))));
        } catch (error) {
          finished = true;
          onInternalError?.(error);
          controller.enqueue(encoder.encode(SSE_INTERNAL_ERROR));
          controller.enqueue(DONE);
          controller.close();
        }
      },
      async cancel() {
        if (!finished) await iterator.return?.();
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(body, { status: 200, headers: { ...SSE_HEADERS, ...headers } });
}
