import type { z } from 'zod';
import { AppError, InvalidContentTypeError, PayloadTooLargeError, ValidationError } from '../src/errors.ts';
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

/** The decisions.md error body; a 500 never leaks internals. */
export function errorResponse(error: unknown, requestId: string): Response {
  if (error instanceof AppError) {
    return json({ error: error.message, code: error.code, ...(error.extra() as Record<string, JsonValue>) }, error.status, error.headers());
  }
  return json({ error: 'An unknown error occurred', code: 'INTERNAL_ERROR', requestId }, 500);
}

// JSON, plus the types clients send by default for a raw body (curl -d, fetch with a string body).
const JSON_TYPE = /^(application\/([\w.+-]+\+)?json|text\/plain|application\/x-www-form-urlencoded)\b/i;

/** 415 unless the body is declared as JSON (or not declared at all). */
export function requireJsonContentType(request: Request): void {
  const type = request.headers.get('content-type');
  if (type && !JSON_TYPE.test(type)) throw new InvalidContentTypeError(`Content-Type must be application/json, got "${type.split(';')[0]}"`);
}

/**
 * Reads a JSON body of at most `limitBytes`. A declared Content-Length over the limit is refused before any
 * byte is read; a chunked body is counted as it streams and abandoned the moment it passes the limit.
 */
export async function readJsonBody(request: Request, limitBytes: number): Promise<unknown> {
  requireJsonContentType(request);
  const bytes = await readBodyLimited(request, limitBytes);
  if (bytes.byteLength === 0) throw new ValidationError('Request body is empty; send a JSON object');
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw new ValidationError('Request body is not valid JSON');
  }
}

/** JSON bodies are small: past this much of a refused one, the connection is not worth keeping. */
const JSON_DISCARD_LIMIT_BYTES = 8 * 1_048_576;

export async function readBodyLimited(request: Request, limitBytes: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > limitBytes) throw new PayloadTooLargeError(limitBytes);
  if (!request.body) return new Uint8Array(0);
  return readAllLimited(request.body, limitBytes, () => new PayloadTooLargeError(limitBytes), { discardUpToBytes: JSON_DISCARD_LIMIT_BYTES });
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
export const parseQuery = <S extends z.ZodType>(schema: S, url: URL): z.output<S> => parseInput(schema, queryObject(url));

export const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

/** `x-balance-usd` / `x-balance-diem` after a charge (decisions.md §1), for paid routes. */
export function balanceHeaders(charge: SettledCharge): Record<string, string> {
  if (charge.alreadySettled) return {};
  if (charge.currency === 'USD') return { 'x-balance-usd': formatNano(charge.balanceAfter) };
  if (charge.currency === 'DIEM') return { 'x-balance-diem': formatNano(charge.balanceAfter) };
  return {};
}
