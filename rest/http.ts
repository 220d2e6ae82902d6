import type { z } from 'zod';
import { AppError, clip, InvalidContentTypeError, PayloadTooLargeError, ValidationError } from '../src/errors.ts';
import type { SettledCharge } from '../src/billing/billing.types.ts';
import { formatNano } from '../src/billing/money.ts';
import { parseInput } from '../src/validation.ts';
import { readAllLimited } from '../src/byte-stream.ts';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue | undefined };

export function json(body: JsonValue, status = 200, headers: HeadersInit = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...Object.fromEntries(new Headers(headers)) },
  });
}

/** The error body `{error, code}` (docs/api.md, Errors), its status and headers; a 500 never leaks internals. */
export function errorPayload(
  error: unknown,
  requestId: string,
): { status: number; body: string; headers: Record<string, string> } {
  if (error instanceof AppError) {
    return {
      status: error.status,
      body: JSON.stringify({ error: error.message, code: error.code, ...(error.extra() as Record<string, JsonValue>) }),
      headers: error.headers(),
    };
  }
  return {
    status: 500,
    body: JSON.stringify({ error: 'An unknown error occurred', code: 'INTERNAL_ERROR', requestId }),
    headers: {},
  };
}

export function errorResponse(error: unknown, requestId: string): Response {
  const { status, body, headers } = errorPayload(error, requestId);
  return new Response(body, { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers } });
}

// application/json, with or without parameters (charset): a body sent as text/plain, as a form or undeclared was
// not meant as this JSON request (a browser sends those cross-site without asking first), so it is not run.
const JSON_TYPE = /^application\/json\s*(;|$)/i;

/** 415 unless the body is declared as application/json. */
export function requireJsonContentType(request: Request): void {
  requireJsonType(request.headers.get('content-type'));
}

export function requireJsonType(type: string | null | undefined): void {
  if (!type || !JSON_TYPE.test(type)) {
    throw new InvalidContentTypeError(
      `Content-Type must be application/json, got ${type ? `"${clip(type.split(';')[0] ?? '')}"` : 'none'}`,
    );
  }
}

/** A JSON request body's bytes parsed; 400 when empty or not UTF-8 JSON. */
export function parseJsonBytes(bytes: Uint8Array): unknown {
  if (bytes.byteLength === 0) throw new ValidationError('Request body is empty; send a JSON object');
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw new ValidationError('Request body is not valid JSON');
  }
}

/**
 * Reads a JSON body of at most `limitBytes`. A declared Content-Length over the limit is refused before any
 * byte is read; a chunked body is counted as it streams and abandoned the moment it passes the limit.
 */
export async function readJsonBody(request: Request, limitBytes: number): Promise<unknown> {
  requireJsonContentType(request);
  return parseJsonBytes(await readBodyLimited(request, limitBytes));
}

/** JSON bodies are small: past this much of a refused one, the connection is not worth keeping. */
export const JSON_DISCARD_LIMIT_BYTES = 8 * 1_048_576;

export async function readBodyLimited(request: Request, limitBytes: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > limitBytes) throw new PayloadTooLargeError(limitBytes);
  if (!request.body) return new Uint8Array(0);
  return readAllLimited(request.body, limitBytes, () => new PayloadTooLargeError(limitBytes), {
    discardUpToBytes: JSON_DISCARD_LIMIT_BYTES,
  });
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
