import type { Logger } from '../logger.ts';
import { annotate, inSpan, tracingOn } from '../observability/tracing.ts';
import type { Reservation, SettledCharge, Usage } from './billing.types.ts';

/** The money steps a paid call takes (BillingService gives them; tests may give their own). */
export interface PaidCallSteps {
  settle(reservation: Reservation, usage: Usage): Promise<SettledCharge>;
  release(reservation: Reservation): Promise<boolean>;
  extend(reservation: Reservation, ttlMs: number): Promise<boolean>;
}

type State = 'open' | 'settling' | 'settled' | 'released';

/**
 * One call's money, from its hold to its end: open (the worst case held) → kept alive while it runs → settled on
 * the usage it reports, or released in full. A call ends once: a second settle is refused, and a release after the
 * end is harmless. A settlement that fails leaves the call open, so that whoever owns it releases it at its end
 * (or, for a job, tries again on the next delivery).
 *
 * Routes do not build one: `BillingService.paidCall` opens it around the work and releases it when the work ends
 * unsettled, whichever way it ends. A call whose hold outlives that work (a stream read later, a queued job) is
 * handed off, and its new owner settles or releases it.
 */
export class PaidCall {
  private state: State = 'open';
  private handed = false;
  private keeper: NodeJS.Timeout | undefined;

  constructor(
    readonly reservation: Reservation,
    private readonly deps: { steps: PaidCallSteps; logger: Pick<Logger, 'warn' | 'error'>; ttlMs: number },
  ) {}

  /** Neither settled nor released yet (nor being settled). */
  get open(): boolean {
    return this.state === 'open';
  }

  /** Whether the call was handed off: its hold outlives the work that opened it. */
  get handedOff(): boolean {
    return this.handed;
  }

  /**
   * Keeps the hold from timing out while a long call runs (a stream, a job): its expiry is moved `ttlMs` ahead every
   * quarter of `ttlMs`, until the call ends, the hold is found gone, or `stop` is called.
   */
  keepAlive(ttlMs = this.deps.ttlMs): { stop: () => void } {
    this.stopKeepingAlive();
    if (!this.open) return { stop: () => undefined };
    const timer = setInterval(
      () =>
        void this.extend(ttlMs).then((held) => {
          if (!held && this.keeper === timer) this.stopKeepingAlive();
        }),
      Math.max(50, ttlMs / 4),
    );
    timer.unref();
    this.keeper = timer;
    return { stop: () => this.keeper === timer && this.stopKeepingAlive() };
  }

  /** Moves the hold's expiry `ttlMs` from now, once; false when it is not held any more. A failure is only logged. */
  async extend(ttlMs = this.deps.ttlMs): Promise<boolean> {
    try {
      return await this.deps.steps.extend(this.reservation, ttlMs);
    } catch (error) {
      this.deps.logger.warn({ err: error, reservationId: this.reservation.id }, 'extending a hold failed; retrying');
      return true;
    }
  }

  /** Charges the usage (at most the hold) and gives the rest back; once per call. A failure leaves the call open. */
  async settle(usage: Usage): Promise<SettledCharge> {
    if (this.state !== 'open') throw new Error(`This paid call is already ${this.state}; it is settled once`);
    this.state = 'settling';
    this.stopKeepingAlive();
    try {
      const charge = tracingOn()
        ? await inSpan('billing settle', { 'lagoon.billing.currency': this.reservation.currency }, async (span) => {
            const settled = await this.deps.steps.settle(this.reservation, usage);
            annotate(span, { 'lagoon.billing.charged_nano': String(settled.charged) });
            return settled;
          })
        : await this.deps.steps.settle(this.reservation, usage);
      this.state = 'settled';
      return charge;
    } catch (error) {
      this.state = 'open';
      throw error;
    }
  }

  /**
   * Gives the whole hold back unless the call was settled (or is being settled): the call failed, or delivered
   * nothing. Never throws: a failed release is logged, and the hold expires and the reservation sweeper frees it.
   */
  async release(): Promise<void> {
    if (this.state !== 'open') return;
    this.state = 'released';
    this.stopKeepingAlive();
    try {
      await this.deps.steps.release(this.reservation);
    } catch (error) {
      this.deps.logger.error(
        { err: error, reservationId: this.reservation.id },
        'release failed; the sweeper will retry',
      );
    }
  }

  /**
   * The hold outlives the work that opened it (a stream read after the call returns, a job stored with its hold):
   * `BillingService.paidCall` then leaves it open, and the receiver settles or releases it.
   */
  handOff(): this {
    this.handed = true;
    return this;
  }

  private stopKeepingAlive(): void {
    clearInterval(this.keeper);
    this.keeper = undefined;
  }
}
