import type { LeaseCall, LeaseUpdateOp } from './billing-ops.ts';
import type { Reservation } from './billing.types.ts';
import { maxNano, type Nano } from './money.ts';
import type { SettledUsageEntry } from './usage.types.ts';

/** A call waiting for a lease to grow: handed its draw, or told to look again (`retry`) or to leave the lease (`refused`). */
interface GrowthWaiter {
  readonly need: Nano;
  readonly ttlMs: number;
  readonly answer: (outcome: Draw | 'retry' | 'refused') => void;
}

/** One call's hold, drawn in memory from a lease; only its lease changes it. */
export interface Draw {
  readonly lease: Lease;
  readonly amount: Nano;
  /** Past this, the call's hold is released as timed out (a running stream moves it forward). */
  readonly expiresAt: number;
  readonly status: 'held' | 'settled' | 'released' | 'expired';
}

type OwnDraw = { -readonly [K in keyof Draw]: Draw[K] };

/** What a lease's next update should ask for besides its charges: `urgent` when a call waits for it. */
interface GrowthWanted {
  readonly min: Nano;
  readonly target: Nano;
  readonly urgent: boolean;
}

/**
 * The in-memory side of one lease: a reservation this process holds in the database for one (account, key, key
 * period, currency), from which calls draw their worst case and into which their settlements are charged, written
 * in batches. What it may still lend is `free`: the held amount less the calls running, the charges not yet written
 * and what an update in flight may give back. All amounts change synchronously, so two calls never draw the same
 * funds; the database row holds at least what the calls running and the unwritten charges need. Every change of its
 * state goes through its methods; lease-updates.ts and leased-holds.ts only read it.
 */
export class Lease {
  /** What the database row holds, as of the last update applied. */
  #held: Nano;
  /** The holds of calls running. */
  #holds = 0n;
  readonly #draws = new Set<OwnDraw>();
  /** Settled calls not yet sent to the database, and those in the update in flight. */
  #pending: LeaseCall[] = [];
  #pendingCharged = 0n;
  #sending: LeaseCall[] = [];
  #sendingCharged = 0n;
  /** Free funds set aside while an update that may give them back is in flight. */
  #releasing = 0n;
  #state: 'open' | 'closing' | 'closed' = 'open';
  #growWanted: GrowthWanted | undefined;
  /** No more growth: the last one was refused. */
  #exhausted = false;
  /**
   * Calls waiting for the lease to grow, first come first served. They are served when an update is applied, before
   * the next update is taken: an urgent growth in flight sets the free rest aside, so a call that waited for one
   * growth and looked again later could find the next growth in flight, and the next, for as long as calls arrive.
   */
  #waiters: GrowthWaiter[] = [];
  /**
   * Updates the database refused in a row: after two, charges are sent one at a time, so that one bad call cannot
   * block the rest. A lost connection does not count: one at a time, a lease that met a few would still be writing
   * its backlog call by call when the process stops, and the calls left unwritten would never be charged.
   */
  #failures = 0;
  /** Of those, the ones the database refused (not a lost connection): only these can give a charge up. */
  #refusals = 0;
  /** The balance's amount as the last update left it (for the balance the caller is told). */
  #knownBalance: Nano;
  readonly openedAt = Date.now();
  #lastDrawAt = Date.now();
  #lastWriteAt = Date.now();
  /** The update queued for the next batch (not yet taken) and the one running, as promises of their end. */
  #queued: Promise<void> | undefined;
  #running: Promise<void> | undefined;

  constructor(
    readonly key: string,
    readonly reservation: Reservation,
    balanceAfter: Nano,
  ) {
    this.#held = reservation.amount;
    this.#knownBalance = balanceAfter;
  }

  get held(): Nano {
    return this.#held;
  }
  get holds(): Nano {
    return this.#holds;
  }
  get draws(): ReadonlySet<Draw> {
    return this.#draws;
  }
  get pendingCount(): number {
    return this.#pending.length;
  }
  get unwritten(): boolean {
    return this.#pending.length > 0 || this.#sending.length > 0;
  }
  get releasing(): Nano {
    return this.#releasing;
  }
  get state(): 'open' | 'closing' | 'closed' {
    return this.#state;
  }
  get exhausted(): boolean {
    return this.#exhausted;
  }
  get lastDrawAt(): number {
    return this.#lastDrawAt;
  }
  get lastWriteAt(): number {
    return this.#lastWriteAt;
  }
  get queued(): Promise<void> | undefined {
    return this.#queued;
  }
  get running(): Promise<void> | undefined {
    return this.#running;
  }
  get knownBalance(): Nano {
    return this.#knownBalance;
  }

  get free(): Nano {
    return this.#held - this.#holds - this.#pendingCharged - this.#sendingCharged - this.#releasing;
  }

  /** What the lease holds and no running call uses (unwritten charges are used). */
  get unused(): Nano {
    return this.#held - this.#holds - this.#pendingCharged - this.#sendingCharged;
  }

  /** The balance after the charges not yet written, as far as this process knows. */
  get balanceEstimate(): Nano {
    return this.#knownBalance - this.#pendingCharged - this.#sendingCharged;
  }

  /** Whether an update has something to do. */
  get hasWork(): boolean {
    return this.#pending.length > 0 || this.#growWanted !== undefined || this.#state === 'closing';
  }

  draw(amount: Nano, expiresAt: number): Draw {
    const draw: OwnDraw = { lease: this, amount, expiresAt, status: 'held' };
    this.#draws.add(draw);
    this.#holds += amount;
    this.#lastDrawAt = Date.now();
    return draw;
  }

  /** Ends a draw: its hold comes back, and its charge (at most the hold) waits to be written. */
  finishDraw(draw: Draw, status: Draw['status'], call?: LeaseCall): void {
    const own = draw as OwnDraw;
    if (this.#draws.delete(own)) this.#holds -= draw.amount;
    own.status = status;
    if (call) {
      this.#pending.push(call);
      this.#pendingCharged += call.charged;
    }
  }

  /** Moves a held draw's timeout; false once it is not held. */
  extendDraw(draw: Draw, expiresAt: number): boolean {
    if (draw.status !== 'held') return false;
    (draw as OwnDraw).expiresAt = expiresAt;
    return true;
  }

  /**
   * Marks a draw settled while its charge is written outside the lease (a second settlement, even one racing that
   * charge, finds it settled); `undo` puts it back if that charge fails.
   */
  settleOutside(draw: Draw): { undo: () => void } {
    const own = draw as OwnDraw;
    const previous = own.status;
    own.status = 'settled';
    return { undo: () => void (own.status = previous) };
  }

  /** Stops new draws; false when it was not open. */
  close(): boolean {
    if (this.#state !== 'open') return false;
    this.#state = 'closing';
    return true;
  }

  /** Asks for `min` more (up to `target`, and at least the lease's size again) in the next update. */
  wantGrowth(min: Nano, target: Nano, urgent: boolean): void {
    const wanted = this.#growWanted;
    this.#growWanted = {
      min: maxNano(min, wanted?.min ?? 0n),
      target: maxNano(maxNano(target, this.#held), wanted?.target ?? 0n),
      urgent: urgent || (wanted?.urgent ?? false),
    };
  }

  /** Puts a call in line for the lease to grow; serveWaiters answers it. */
  waitInLine(need: Nano, ttlMs: number): Promise<Draw | 'retry' | 'refused'> {
    return new Promise((answer) => this.#waiters.push({ need, ttlMs, answer }));
  }

  /**
   * After an update: the waiting calls the lease now covers get their draws, in order. The others look again
   * elsewhere when the lease has ended (`retry`), leave it when it cannot grow (refused, or the update failed), or
   * stay in line; returns what those staying need, if any stay.
   */
  serveWaiters(failed: boolean): { firstNeed: Nano; totalNeed: Nano } | undefined {
    const waiters = this.#waiters;
    this.#waiters = [];
    let totalNeed = 0n;
    for (const waiter of waiters) {
      if (this.#state === 'open' && this.free >= waiter.need)
        waiter.answer(this.draw(waiter.need, Date.now() + waiter.ttlMs));
      else if (this.#state !== 'open') waiter.answer('retry');
      else if (failed || this.#exhausted) waiter.answer('refused');
      else {
        this.#waiters.push(waiter);
        totalNeed += waiter.need;
      }
    }
    const first = this.#waiters[0];
    return first && { firstNeed: first.need, totalNeed };
  }

  /** An update is queued for the next batch; `done` resolves when it is written. */
  updateQueued(done: Promise<void>): void {
    this.#queued = done;
  }

  /** The next update, taken when its batch starts: takes the pending charges; ends a closing lease whose calls are done. */
  takeUpdate(expiresAt: Date): LeaseUpdateOp {
    this.#running = this.#queued;
    this.#queued = undefined;
    const count = this.#failures >= 2 ? Math.min(1, this.#pending.length) : this.#pending.length;
    this.#sending = this.#pending.slice(0, count);
    this.#pending = this.#pending.slice(count);
    this.#sendingCharged = sumCharged(this.#sending);
    this.#pendingCharged -= this.#sendingCharged;
    const finish = this.#state === 'closing' && this.#holds === 0n && this.#pending.length === 0;
    const grow = this.#state === 'open' ? this.#growWanted : undefined;
    this.#growWanted = undefined;
    // A closing lease gives back what no running call needs; so does one whose urgent growth is refused.
    const release = !finish && (this.#state === 'closing' || grow?.urgent) ? this.free : 0n;
    // An ending lease lends nothing more: a late settlement arriving meanwhile is charged directly, not left behind.
    this.#releasing = finish ? this.free : release;
    return {
      kind: 'lease',
      lease: this.reservation,
      calls: this.#sending,
      ...(grow && { grow: { min: grow.min, target: grow.target } }),
      release,
      finish,
      expiresAt,
    };
  }

  /** Applies a written update: the row's new amount; returns the entries now committed. */
  applyUpdate(op: LeaseUpdateOp, outcome: { amount: Nano; grown: Nano; balanceAfter: Nano }): SettledUsageEntry[] {
    this.#running = undefined;
    if (op.grow && outcome.grown === 0n) this.#exhausted = true;
    const entries = this.#sending.flatMap((call) => call.entries);
    this.#held = outcome.amount;
    this.#knownBalance = outcome.balanceAfter;
    this.#sending = [];
    this.#sendingCharged = 0n;
    this.#releasing = 0n;
    this.#lastWriteAt = Date.now();
    if (this.#pending.length === 0) this.#failures = 0;
    this.#refusals = 0;
    if (op.finish) this.#state = 'closed';
    return entries;
  }

  /**
   * The database holds the lease no more (the sweeper freed it after this process stalled): it ends, and the calls
   * it had not written are returned, to be charged outside it.
   */
  endUnheld(): LeaseCall[] {
    this.#running = undefined;
    const calls = [...this.#sending, ...this.#pending];
    this.#held = 0n;
    this.#sending = [];
    this.#sendingCharged = 0n;
    this.#pending = [];
    this.#pendingCharged = 0n;
    this.#releasing = 0n;
    this.#lastWriteAt = Date.now();
    this.#state = 'closed';
    return calls;
  }

  /**
   * The update failed: its charges go back in front of the queue, to be sent again. A charge the database refused
   * four times while sent alone is given up and returned (e.g. its key was deleted meanwhile); a charge that only
   * met a lost connection or an overloaded server is kept, however long the outage lasts.
   */
  restoreUpdate(op: LeaseUpdateOp, refused: boolean): LeaseCall | undefined {
    this.#running = undefined;
    if (refused) this.#failures += 1;
    this.#refusals = refused && this.#sending.length === 1 ? this.#refusals + 1 : 0;
    const givenUp = this.#refusals >= 4 ? this.#sending[0] : undefined;
    if (givenUp) this.#refusals = 0;
    if (!givenUp) {
      this.#pending = [...this.#sending, ...this.#pending];
      this.#pendingCharged += this.#sendingCharged;
    }
    this.#sending = [];
    this.#sendingCharged = 0n;
    this.#releasing = 0n;
    if (op.grow && this.#state === 'open') this.#growWanted ??= { ...op.grow, urgent: false };
    return givenUp;
  }
}

const sumCharged = (calls: readonly LeaseCall[]): Nano => calls.reduce((sum, call) => sum + call.charged, 0n);
