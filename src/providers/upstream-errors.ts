import { ValidationError, UpstreamError, type AppError } from '../errors.ts';

/**
 * An UpstreamError from a chat adapter, with what the gateway needs to decide what to do next. Messages are
 * shown to callers, so they name neither the provider, its URL nor the upstream model (those go to the logs).
 */
export class ChatUpstreamError extends UpstreamError {
  constructor(
    message: string,
    code: UpstreamError['code'],
    /** Worth another attempt on the same upstream (connection error, 5xx, timeout); never for a 4xx. */
    readonly retryable: boolean,
    /** The caller's signal aborted the call: stop everything, no retry and no fallback. */
    readonly cancelled = false,
    /** For the operator's logs only (e.g. the socket error): may name hosts, never shown to callers. */
    readonly detail?: string,
  ) {
    super(message, code);
    this.name = 'ChatUpstreamError';
  }
}

export const cancelledError = () => new ChatUpstreamError('The request was cancelled', 'UPSTREAM_ERROR', false, true);

export const timeoutError = (ms: number, what = 'answer', detail?: string) =>
  new ChatUpstreamError(`The model server did not ${what} within ${ms} ms`, 'REQUEST_TIMEOUT', true, false, detail);

export const brokenError = (what: string, detail?: string) =>
  new ChatUpstreamError(`The model server ${what}`, 'UPSTREAM_ERROR', true, false, detail);

/** What the logs say about a failure: the caller-safe message, and the operator detail when there is one. */
export function describeFailure(error: unknown): Record<string, unknown> {
  if (error instanceof ChatUpstreamError)
    return {
      code: error.code,
      message: error.message,
      ...(error.detail ? { detail: error.detail } : {}),
    };
  if (error instanceof UpstreamError) return { code: error.code, message: error.message };
  return { message: error instanceof Error ? error.message : String(error) };
}

/** Whether the gateway may try the same upstream again (before any output). */
export function isRetryable(error: unknown): boolean {
  if (error instanceof ChatUpstreamError) return error.retryable;
  return false;
}

/** Whether the gateway may move on to the model's next provider: any upstream failure but a cancellation. */
export function allowsFallback(error: unknown): boolean {
  return error instanceof UpstreamError && !(error instanceof ChatUpstreamError && error.cancelled);
}

/**
 * An HTTP error status from an OpenAI-style upstream, mapped so that only the caller's own mistakes are 4xx;
 * `server` names it in the messages ("model server", "image server").
 */
export function upstreamStatusError(status: number, message: string | undefined, server: string): AppError {
  if (status === 400 || status === 413 || status === 422)
    return new ValidationError(message ?? `The ${server} rejected the request (HTTP ${status})`);
  if (status === 429)
    return new ChatUpstreamError(`The ${server} is at capacity; try again shortly`, 'MODEL_AT_CAPACITY', true);
  // 401/403 is the operator's key, 404 the operator's model name: not the caller's fault, and not worth a retry.
  if (status < 500)
    return new ChatUpstreamError(`The ${server} refused the request (HTTP ${status})`, 'UPSTREAM_ERROR', false);
  return new ChatUpstreamError(`The ${server} failed (HTTP ${status})`, 'UPSTREAM_ERROR', true);
}

/** An upstream answer's body as text, refused as broken once it passes `limit` bytes. */
export async function readLimited(
  body: AsyncIterable<unknown> & { destroy(): unknown },
  limit: number,
): Promise<string> {
  return (await readLimitedBytes(body, limit)).toString('utf8');
}

/** As readLimited, the bytes themselves. */
export async function readLimitedBytes(
  body: AsyncIterable<unknown> & { destroy(): unknown },
  limit: number,
): Promise<Buffer> {
  const parts: Buffer[] = [];
  let total = 0;
  for await (const part of body) {
    const buffer = part as Buffer;
    total += buffer.length;
    if (total > limit) {
      body.destroy();
      throw brokenError('sent an answer that is too large');
    }
    parts.push(buffer);
  }
  return Buffer.concat(parts);
}
