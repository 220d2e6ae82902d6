/*
 * The trace id a call's log line carries when tracing is off (src/observability/tracing.ts): the one of the
 * caller's W3C `traceparent` header, so the line still joins the caller's trace. With tracing on, the request's
 * server span gives it.
 */

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}/;
const INVALID = '00000000000000000000000000000000';

/** The trace id of a request's `traceparent` header (32 lower-case hex digits), or undefined. */
export function logTraceId(traceparent: string | string[] | undefined): string | undefined {
  if (typeof traceparent !== 'string') return undefined;
  const id = TRACEPARENT.exec(traceparent.trim().toLowerCase())?.[1];
  return id === INVALID ? undefined : id;
}
