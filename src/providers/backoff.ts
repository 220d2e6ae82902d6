/**
 * The pause before another attempt at the same upstream: it doubles with each retry from `baseMs` up to `maxMs`,
 * and each pause is drawn between half and one and a half of that (jitter), so callers that failed together do
 * not all come back at the same moment. The clock (`sleep`) and the dice (`random`) are injectable for tests.
 */
export interface BackoffOptions {
  /** The middle of the first pause (default 100 ms). */
  readonly baseMs?: number;
  /** The middle of the longest pause (default 2 s). */
  readonly maxMs?: number;
  /** A number in [0, 1) (default Math.random). */
  readonly random?: () => number;
  /** Waits `ms`; false when the signal aborted meanwhile (default: `pause`). */
  readonly sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<boolean>;
}

export class Backoff {
  private readonly baseMs: number;
  private readonly maxMs: number;
  private readonly random: () => number;
  private readonly sleep: (ms: number, signal: AbortSignal | undefined) => Promise<boolean>;

  constructor(options: BackoffOptions = {}) {
    this.baseMs = options.baseMs ?? 100;
    this.maxMs = options.maxMs ?? 2_000;
    this.random = options.random ?? Math.random;
    this.sleep = options.sleep ?? pause;
  }

  /** The pause before retry number `retry` (0 for the first retry), in whole milliseconds. */
  delayMs(retry: number): number {
    const middle = Math.min(this.maxMs, this.baseMs * 2 ** retry);
    return Math.round(middle * (0.5 + this.random()));
  }

  /** Waits before retry number `retry`; false when the caller aborted (before or meanwhile). */
  async pause(retry: number, signal: AbortSignal | undefined): Promise<boolean> {
    if (signal?.aborted) return false;
    return this.sleep(this.delayMs(retry), signal);
  }
}

/** Waits `ms`, cut short by the signal; false when the signal aborted (before or meanwhile). */
export async function pause(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
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
