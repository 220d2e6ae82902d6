import { isRefusedByDatabase } from '../db/errors.ts';
import type { Logger } from '../logger.ts';

const FIRST_WAIT_MS = 200;
const MAX_WAIT_MS = 5_000;
/** A direct charge is tried for about a minute (the caller waits for it) before it is given up and logged. */
const ATTEMPTS = 16;

/**
 * Charges of calls whose lease was gone (swept after a stall, or ended at shutdown), written one by one outside
 * the leases. Each is retried while the database is out of reach (not when it refuses it), as lease updates are;
 * the manager's close() and flush() wait for the ones in flight, so none is cut off by the database closing.
 */
export class DirectCharges {
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly logger: Logger) {}

  /** Keeps a charging already started in flight until it ends. */
  track<T>(charging: Promise<T>): Promise<T> {
    this.inFlight.add(charging);
    const forget = () => this.inFlight.delete(charging);
    charging.then(forget, forget);
    return charging;
  }

  /** Waits for the charges in flight now (`untilNone`: and for those they start, until none is left). */
  async settled(untilNone = false): Promise<void> {
    do await Promise.all([...this.inFlight].map((charging) => charging.catch(() => undefined)));
    while (untilNone && this.inFlight.size > 0);
  }

  /** Charges calls one at a time, each retried alone (a retry never charges again a call already written); tracked. */
  chargeEach<C>(calls: readonly C[], charge: (call: C) => Promise<unknown>): Promise<void> {
    return this.track(
      (async () => {
        for (const call of calls) await this.retryTransient(() => charge(call));
      })(),
    );
  }

  /** Runs `charge` again while the database is out of reach; a refusal, or the last attempt's error, is thrown. */
  async retryTransient<T>(charge: () => Promise<T>): Promise<T> {
    for (let attempt = 1, wait = FIRST_WAIT_MS; ; attempt += 1, wait = Math.min(wait * 2, MAX_WAIT_MS)) {
      try {
        return await charge();
      } catch (error) {
        if (isRefusedByDatabase(error) || attempt >= ATTEMPTS) throw error;
        this.logger.error({ err: error, retryInMs: wait }, 'charging a call directly failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }
}
