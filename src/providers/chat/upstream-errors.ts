import { UpstreamError } from '../../errors.ts';

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
