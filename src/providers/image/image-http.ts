import type { Pool } from 'undici';
import { undici } from '../../undici.ts';
import { AppError } from '../../errors.ts';
import { parseJson, upstreamErrorMessage } from '../chat/openai-wire.ts';
import type { ResponseBody } from '../chat/sse-chunk-stream.ts';
import type { LiftedJson } from '../lifted-json.ts';
import { parseLifted } from '../lifted-json.ts';
import {
  brokenError,
  cancelledError,
  readLimitedBytes,
  upstreamStatusError,
  timeoutError,
} from '../upstream-errors.ts';

/*
 * JSON over HTTP for the image adapters (OpenAI-compatible images, AUTOMATIC1111/Forge): one undici keep-alive
 * pool per provider, a deadline per call, and upstream statuses mapped as the chat adapter maps them
 * (src/providers/chat/openai-compatible.engine.ts), so the gateway retries and falls back the same way.
 */

/** Image generation is slow: a whole picture (or four) before the first byte of the answer. */
export const IMAGE_UPSTREAM_DEFAULT_TIMEOUT_MS = 300_000;
/** Base64 pictures are large; an answer above this is refused rather than buffered. */
const MAX_BODY_BYTES = 128 * 1024 * 1024;

export interface ImageHttpSettings {
  readonly baseUrl: string;
  readonly apiKey?: string | undefined;
  /** Time to the whole answer. */
  readonly timeoutMs: number;
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

export class ImageHttpClient {
  private readonly pool: Pool;
  private readonly basePath: string;

  constructor(
    private readonly id: string,
    private readonly settings: ImageHttpSettings,
  ) {
    const url = new URL(settings.baseUrl);
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.pool = new (undici().Pool)(url.origin, {
      keepAliveTimeout: 30_000,
      headersTimeout: settings.timeoutMs,
      bodyTimeout: settings.timeoutMs,
      connect: { timeout: Math.min(settings.timeoutMs, 10_000) },
    });
  }

  /** The parsed JSON of a 200 answer; the mapped error for anything else. `path` is under the base URL's path. */
  async json(method: 'GET' | 'POST', path: string, payload: unknown, signal: AbortSignal | undefined) {
    const parsed = parseJson((await this.answer(method, path, payload, signal)).toString('utf8'));
    if (parsed === undefined) throw brokenError('sent an answer that is not JSON');
    return parsed;
  }

  /** As json(), for answers with pictures: their base64 strings are kept as bytes (lifted-json.ts). */
  async pictures(method: 'POST', path: string, payload: unknown, signal: AbortSignal | undefined): Promise<LiftedJson> {
    const parsed = parseLifted(await this.answer(method, path, payload, signal));
    if (parsed === undefined) throw brokenError('sent an answer that is not JSON');
    return parsed;
  }

  /** The bytes of a 200 answer; the mapped error for anything else. */
  private async answer(method: 'GET' | 'POST', path: string, payload: unknown, signal: AbortSignal | undefined) {
    if (signal?.aborted) throw cancelledError();
    const deadline = AbortSignal.timeout(this.settings.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, deadline]) : deadline;
    let response;
    try {
      response = await this.pool.request({
        path: `${this.basePath}${path}`,
        method,
        headers: this.headers(),
        ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
        signal: combined,
      });
    } catch (error) {
      throw this.transportError(error, signal, deadline, 'could not be reached');
    }
    const body = response.body as ResponseBody;
    let bytes: Buffer;
    try {
      bytes = await readLimitedBytes(body, response.statusCode === 200 ? MAX_BODY_BYTES : 64 * 1024);
    } catch (error) {
      throw this.transportError(error, signal, deadline, 'broke off its answer');
    }
    if (response.statusCode !== 200) {
      throw statusError(response.statusCode, upstreamErrorMessage(bytes.toString('utf8')));
    }
    return bytes;
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }

  private headers(): Record<string, string> {
    return {
      'content-type': 'application/json',
      accept: 'application/json',
      ...this.settings.headers,
      ...(this.settings.apiKey ? { authorization: `Bearer ${this.settings.apiKey}` } : {}),
    };
  }

  private transportError(error: unknown, caller: AbortSignal | undefined, deadline: AbortSignal, what: string) {
    if (error instanceof AppError) return error;
    if (caller?.aborted) return cancelledError();
    const code = (error as { code?: unknown } | null)?.code;
    const detail = `${this.id}: ${typeof code === 'string' ? `${code} ` : ''}${error instanceof Error ? error.message : String(error)}`;
    if (
      deadline.aborted ||
      code === 'UND_ERR_HEADERS_TIMEOUT' ||
      code === 'UND_ERR_CONNECT_TIMEOUT' ||
      code === 'UND_ERR_BODY_TIMEOUT'
    )
      return timeoutError(this.settings.timeoutMs, 'answer', detail);
    return brokenError(what, detail);
  }
}

/**
 * A picture from its base64 in an upstream answer (a data URL prefix is allowed). When the text is canonical
 * base64 (standard alphabet, padded, nothing skipped), it is kept as `base64`: a picture that passes through
 * unchanged is then answered in these very bytes.
 */
export function decodePicture(text: string | Buffer): { bytes: Buffer; base64?: Buffer } {
  let source = typeof text === 'string' ? Buffer.from(text, 'latin1') : text;
  if (source.subarray(0, 5).toString('latin1') === 'data:') source = source.subarray(source.indexOf(0x2c) + 1);
  const bytes = Buffer.from(source.toString('latin1'), 'base64');
  if (bytes.length === 0) throw brokenError('sent an empty picture');
  return isCanonicalBase64(source, bytes.length) ? { bytes, base64: source } : { bytes };
}

/**
 * Node's decoder skips what is not base64 and reads the URL-safe alphabet too: the text is canonical when its
 * length decodes to exactly what came out and it has neither `-` nor `_`.
 */
function isCanonicalBase64(source: Buffer, decodedLength: number): boolean {
  if (source.length % 4 !== 0) return false;
  const padding = source[source.length - 1] === 0x3d ? (source[source.length - 2] === 0x3d ? 2 : 1) : 0;
  return (
    (source.length / 4) * 3 - padding === decodedLength && source.indexOf(0x2d) === -1 && source.indexOf(0x5f) === -1
  );
}

/** An upstream's HTTP error status, worded for an image server (the chat adapter's table). */
export const statusError = (status: number, message: string | undefined) =>
  upstreamStatusError(status, message, 'image server');
