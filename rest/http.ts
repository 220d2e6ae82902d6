import type { z } from 'zod';
import { AppError, clip, InvalidContentTypeError, ValidationError } from '../src/errors.ts';
import type { SettledCharge } from '../src/billing/billing.types.ts';
import { formatNano } from '../src/billing/money.ts';
import { isRecord, parseInput } from '../src/validation.ts';
import { errorHeaders, errorStatus } from './error-map.ts';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue | undefined };

/**
 * What a handler answers; the pipeline (pipeline.ts) writes it. A whole body goes in one write with its length;
 * `stream` is written chunk by chunk as the client reads; `events` is a server-sent event stream (sse.ts).
 */
export type Reply =
  | { readonly status: number; readonly headers: Record<string, string>; readonly body: string | Uint8Array }
  | {
      readonly status: number;
      readonly headers: Record<string, string>;
      readonly stream: ChunkSource;
      /**
       * How many bytes may wait for a slow client before the source is read further (default: the socket's own
       * high-water mark, 16 KiB). A relay sets more, so that its upstream is not read in step with the client.
       */
      readonly writeAheadBytes?: number;
    }
  | { readonly status: 200; readonly headers: Record<string, string>; readonly events: SseSource };

/** A streamed body: Node's web streams are async iterable (the DOM typings do not say so). */
export type ChunkSource = AsyncIterable<string | Uint8Array> | ReadableStream<Uint8Array>;

/** An SSE stream: each event's JSON payload comes from `toData`. */
export interface SseSource {
  readonly source: AsyncIterable<unknown>;
  readonly toData: (event: never) => unknown;
}

export const JSON_TYPE_HEADER = 'application/json; charset=utf-8';

export function json(body: JsonValue, status = 200, headers: Record<string, string> = {}): Reply {
  return { status, headers: { 'content-type': JSON_TYPE_HEADER, ...headers }, body: JSON.stringify(body) };
}

/** A body that is not JSON (text, CSV, a proxied answer). */
export const text = (body: string | Uint8Array, headers: Record<string, string>, status = 200): Reply => ({
  status,
  headers,
  body,
});

/** The error body `{error, code}` (docs/api.md, Errors), its status and headers; a 500 never leaks internals. */
export function errorPayload(
  error: unknown,
  requestId: string,
): { status: number; body: string; headers: Record<string, string> } {
  if (error instanceof AppError) {
    return {
      status: errorStatus(error),
      body: JSON.stringify({ error: error.message, code: error.code, ...(error.extra() as Record<string, JsonValue>) }),
      headers: errorHeaders(error),
    };
  }
  return {
    status: 500,
    body: JSON.stringify({ error: 'An unknown error occurred', code: 'INTERNAL_ERROR', requestId }),
    headers: {},
  };
}

// application/json, with or without parameters (charset): a body sent as text/plain, as a form or undeclared was
// not meant as this JSON request (a browser sends those cross-site without asking first), so it is not run.
const JSON_TYPE = /^application\/json\s*(;|$)/i;

export function requireJsonType(type: string | null | undefined): void {
  if (!type || !JSON_TYPE.test(type)) {
    throw new InvalidContentTypeError(
      `Content-Type must be application/json, got ${type ? `"${clip(type.split(';')[0] ?? '')}"` : 'none'}`,
    );
  }
}

/**
 * A JSON request body's bytes parsed: always an object. 400 when empty, not UTF-8 JSON, or JSON of another kind
 * (null, an array, a number, a string, a boolean), which no route takes and which handlers then need not expect.
 * (The crypto RPC proxy, whose batches are arrays, reads its raw bytes instead.)
 */
export function parseJsonBytes(bytes: Uint8Array): Record<string, unknown> {
  if (bytes.byteLength === 0) throw new ValidationError('Request body is empty; send a JSON object');
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw new ValidationError('Request body is not valid JSON');
  }
  if (!isRecord(value)) throw new ValidationError(`Request body must be a JSON object, not ${kindOf(value)}`);
  return value;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** Query-string parameters as an object; repeated keys become arrays. */
export function queryObject(url: URL): Record<string, string | string[]> {
  const raw: Record<string, string | string[]> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(key);
    raw[key] = values.length === 1 ? (values[0] ?? '') : values;
  }
  return raw;
}

/** Query-string parameters validated by a zod schema (400 naming the parameter on failure). */
export const parseQuery = <S extends z.ZodType>(schema: S, url: URL): z.output<S> =>
  parseInput(schema, queryObject(url));

export const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

/** `x-balance-usd` / `x-balance-diem` after a charge (docs/api.md), for paid routes. */
export function balanceHeaders(charge: SettledCharge): Record<string, string> {
  if (charge.alreadySettled) return {};
  if (charge.currency === 'USD') return { 'x-balance-usd': formatNano(charge.balanceAfter) };
  if (charge.currency === 'DIEM') return { 'x-balance-diem': formatNano(charge.balanceAfter) };
  return {};
}
