import { UpstreamError } from '../errors.ts';

/** How one upstream call ended, as the metrics count it (`broken`: a stream that stopped after it started). */
export type UpstreamOutcome = 'ok' | 'timeout' | 'error' | 'rejected' | 'cancelled' | 'broken';

/** The pause before a retry of the same upstream. */
export const RETRY_DELAY_MS = 100;

/** A failed call's outcome: the caller's abort, a timeout, an upstream fault, or a refusal of the request itself. */
export function outcomeOf(error: unknown, signal: AbortSignal | undefined): Exclude<UpstreamOutcome, 'ok' | 'broken'> {
  if (signal?.aborted) return 'cancelled';
  if (!(error instanceof UpstreamError)) return 'rejected';
  return error.code === 'REQUEST_TIMEOUT' ? 'timeout' : 'error';
}

/** Waits before a retry; false when the caller aborted meanwhile. */
export async function pauseBeforeRetry(signal: AbortSignal | undefined, ms = RETRY_DELAY_MS): Promise<boolean> {
  if (signal?.aborted) return false;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
  return !signal?.aborted;
}
