import { randomUUID } from 'node:crypto';
import type { AuthContext } from '../auth/auth-context.ts';
import { isRefusedByDatabase } from '../db/errors.ts';
import { InsufficientBalanceError, SpendLimitExceededError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { BillingOp, LeaseCall, LeaseUpdateOp, OpOutcome, ReserveOp } from './billing-batch.ts';
import { priceIn, type Price, type Reservation, type SettledCharge } from './billing.types.ts';
import type { ItemOutcome } from './group-commit.ts';
import { DirectCharges } from './direct-charges.ts';
import { Lease, type Draw } from './lease.ts';
import { maxNano, type Currency, type Nano } from './money.ts';
import type { LeaseOptions } from './lease-options.ts';
import { periodStart } from './periods.ts';
import type { SettledUsageEntry } from './usage.types.ts';

/**
 * An update of a lease, materialised when its batch starts, so that it carries every charge settled until then, and
 * applied as soon as the batch ends, before the next batch takes the lease's next update.
 */
export interface LeaseUpdateRequest {
  readonly kind: 'lease-update';
  readonly take: () => LeaseUpdateOp;
  readonly finished: (result: ItemOutcome<OpOutcome>) => void;
}

export interface LeaseManagerDeps {
  /** Runs an op in the account's next billing batch. */
  readonly submit: (accountId: string, op: BillingOp | LeaseUpdateRequest) => Promise<OpOutcome>;
  /** Charges a call whose lease is not held any more (swept after a stall, or ended at shutdown), as a late settlement does. */
  readonly chargeUnheld: (lease: Reservation, call: LeaseCall) => Promise<void>;
  /** Hears of committed usage entries. */
  readonly committed: (entries: readonly SettledUsageEntry[]) => void;
  /** Asks other processes to give back the unused part of their leases on an account; resolves when worth retrying. */
  readonly reclaimElsewhere: (accountId: string) => Promise<boolean>;
  readonly logger: Logger;
  readonly holder: string;
  readonly options: LeaseOptions;
}

const RETRY_MS = 200;
const MAX_RETRY_MS = 5_000;
const MAX_ATTEMPTS = 64;

/**
 * Balance leases: the hot path of paid calls without a database round trip. A process takes a lease (a held
 * reservation of a share of an account's balance and key limit, at most a quarter of what is free, in the currency
 * the charging order picks) and draws each call's worst case from it in memory; settlements are charged against the
 * lease in the next billing batch, after the answer. A balance or key limit still never goes below zero: every
 * draw is covered by funds the database holds for this process. A process that dies leaves its lease to expire;
 * the sweeper gives it back (charges not yet written are lost, in the customer's favour). A process refused for lack
 * of funds first takes back its own leases on the account, then asks the others for theirs.
 */
export class LeaseManager {
  /** The open lease of each (account, key, key period). */
  private readonly open = new Map<string, Lease>();
  /** Every lease not yet ended (open and closing). */
  private readonly live = new Set<Lease>();
  /** Leases being taken, with the worst case of the call taking each (calls that need no more share its refusal). */
  private readonly opening = new Map<string, { readonly done: Promise<void>; readonly maxCost: Price }>();
  /** The draws behind the reservations handed out (by object: callers hand the same object back). */
  private readonly draws = new WeakMap<object, Draw>();
  /** The lease size that served each (account, key, key period) last, so a renewed lease starts as large. */
  private readonly lastSize = new Map<string, Nano>();
  private readonly timer: NodeJS.Timeout;
  /** Leases with settled charges waiting for the write timer. */
  private readonly dueWrites = new Set<Lease>();
  private writeTimer: NodeJS.Timeout | undefined;
  /** Charges of calls whose lease was gone, being written directly (close() and flush() wait for them). */
  private readonly directCharges: DirectCharges;
  /** Bumped by closeKey: a lease decided before its key changed is not lent from (its limit may be stale). */
  private readonly keyEpochs = new Map<string, number>();
  private retryMs = RETRY_MS;
  private closed = false;

  constructor(private readonly deps: LeaseManagerDeps) {
    this.directCharges = new DirectCharges(deps.logger);
    this.timer = setInterval(() => this.tick(), deps.options.tickMs);
    this.timer.unref();
  }

  /** Holds `maxCost` for a call from this process's lease, taking or growing the lease when it does not cover it. */
  async draw(auth: Extract<AuthContext, { kind: 'apiKey' }>, maxCost: Price, ttlMs: number): Promise<Reservation> {
    const keyPeriodStart = periodStart(auth.apiKey.limitPeriod, new Date());
    const key = `${auth.accountId}/${auth.apiKey.id}/${keyPeriodStart.getTime()}`;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
      const lease = this.open.get(key);
      if (!lease) {
        await this.openLease(key, auth, maxCost, keyPeriodStart);
        continue;
      }
      const need = priceIn(maxCost, lease.reservation.currency);
      if (lease.free >= need) return this.reservationOf(lease, lease.draw(need, Date.now() + ttlMs), auth.requestId);
      const waited = lease.exhausted ? 'refused' : await this.waitForGrowth(lease, need, ttlMs);
      if (waited === 'refused') this.closeLease(lease);
      else if (waited !== 'retry') return this.reservationOf(lease, waited, auth.requestId);
    }
    throw new InsufficientBalanceError();
  }

  /**
   * Charges a drawn call (written in the next batch). When its lease cannot take the charge any more (ended, or
   * ending), `chargeDirectly` charges it at once, from free funds; either way a call is charged once however often
   * it is settled.
   */
  settle<T extends { charge: SettledCharge }>(
    reservation: Reservation,
    call: LeaseCall,
    chargeDirectly: () => Promise<T>,
  ): SettledCharge | Promise<T> {
    const draw = this.draws.get(reservation);
    if (!draw) throw new Error(`Reservation ${reservation.id} was not drawn from a lease of this process`);
    const { lease } = draw;
    const base = {
      reservationId: reservation.id,
      currency: reservation.currency,
      usageEntryIds: call.entries.map((entry) => entry.id),
    };
    if (draw.status === 'settled' || draw.status === 'released')
      return { ...base, charged: 0n, balanceAfter: 0n, usageEntryIds: [], alreadySettled: true };
    // A draw released past its timeout may still be charged if its lease can cover it; otherwise directly.
    const direct =
      (draw.status === 'expired' && (lease.state === 'closed' || lease.free < call.charged)) ||
      (draw.status === 'held' && lease.state === 'closed');
    if (direct) {
      const previous = draw.status;
      draw.status = 'settled'; // a second settlement, even one racing this charge, finds it settled
      const charging = this.directCharges.retryTransient(chargeDirectly).catch((error: unknown) => {
        draw.status = previous;
        throw error;
      });
      return this.directCharges.track(charging);
    }
    lease.finishDraw(draw, 'settled', call);
    // A closing lease gives its funds back with this write: no waiting for company.
    if (lease.state === 'open') this.scheduleWrite(lease);
    else void this.schedule(lease).catch(() => undefined);
    return { ...base, charged: call.charged, balanceAfter: lease.balanceEstimate, alreadySettled: false };
  }

  /** Moves a running call's timeout (its lease is kept alive by its own updates); false once the draw is not held. */
  extend(reservation: object, ttlMs: number): boolean {
    const draw = this.draws.get(reservation);
    if (draw?.status !== 'held') return false;
    draw.expiresAt = Date.now() + ttlMs;
    return true;
  }

  /** Gives a drawn call's hold back (the call failed before producing anything). */
  release(reservation: object): boolean {
    const draw = this.draws.get(reservation);
    if (!draw || draw.status !== 'held') return false;
    draw.lease.finishDraw(draw, 'released');
    if (draw.lease.state === 'closing' && draw.lease.holds === 0n) this.schedule(draw.lease);
    return true;
  }

  /** Waits until every charge of the account settled so far is written (reads of usage and balances call this). */
  async flush(accountId?: string): Promise<void> {
    for (const lease of this.live) {
      if (accountId !== undefined && lease.reservation.accountId !== accountId) continue;
      for (let round = 0; round < 3 && (lease.pending.length > 0 || lease.sending.length > 0); round += 1) {
        if (lease.pending.length > 0) this.schedule(lease);
        await (lease.pending.length > 0 ? lease.queued : lease.running)?.catch(() => undefined);
      }
    }
    await this.directCharges.settled();
  }

  /** What this process holds in leases on an account and no running call uses, per currency (to show true holds). */
  unusedHeld(accountId: string): Map<Currency, Nano> {
    const unused = new Map<Currency, Nano>();
    for (const lease of this.live) {
      if (lease.reservation.accountId !== accountId) continue;
      const { currency } = lease.reservation;
      unused.set(
        currency,
        (unused.get(currency) ?? 0n) + lease.held - lease.holds - lease.pendingCharged - lease.sendingCharged,
      );
    }
    return unused;
  }

  /** Gives back the unused part of this process's leases on an account (another process asked, or a call was refused). */
  async reclaim(accountId: string): Promise<boolean> {
    // Funds an update in flight is giving back (an idle lease ending) count too: they are back once it is written.
    const unused = () =>
      [...this.live].filter(
        (lease) =>
          lease.reservation.accountId === accountId &&
          lease.state !== 'closed' &&
          (lease.free > 0n || lease.releasing > 0n),
      );
    const leases = unused();
    for (const lease of leases) this.closeLease(lease);
    // An update taken before the close gives nothing back; the one after it does.
    for (let round = 0; round < 3 && unused().length > 0; round += 1) {
      await Promise.all(
        unused().map((lease) => (lease.queued ?? lease.running ?? this.schedule(lease)).catch(() => undefined)),
      );
    }
    return leases.length > 0;
  }

  /** Ends the leases of a key whose limits changed (or that was deleted): the next call is decided afresh. */
  closeKey(apiKeyId: string): void {
    this.keyEpochs.set(apiKeyId, (this.keyEpochs.get(apiKeyId) ?? 0) + 1);
    for (const lease of this.live) if (lease.reservation.apiKeyId === apiKeyId) this.closeLease(lease);
  }

  /** Writes every pending charge and ends every lease (shutdown). Calls still running are charged directly later. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    clearTimeout(this.writeTimer);
    this.dueWrites.clear();
    for (const lease of this.live) {
      // Calls still running when the process stops lose their hold; their settlements are charged directly.
      for (const draw of [...lease.draws]) lease.finishDraw(draw, 'expired');
      this.closeLease(lease);
    }
    for (let round = 0; round < 5 && this.live.size > 0; round += 1) {
      await Promise.all([...this.live].map((lease) => (lease.queued ?? lease.running)?.catch(() => undefined)));
      for (const lease of this.live) if (!lease.queued && !lease.running) this.schedule(lease);
    }
    // The database closes after this: charges being written directly must be in it first.
    await this.directCharges.settled(true);
  }

  private reservationOf(lease: Lease, draw: Draw, requestId: string): Reservation {
    const { amount } = draw;
    const { accountId, apiKeyId, currency, keyPeriodStart } = lease.reservation;
    const reservation: Reservation = {
      id: randomUUID(),
      accountId,
      apiKeyId,
      currency,
      amount,
      keyPeriodStart,
      requestId,
      leaseId: lease.reservation.id,
    };
    this.draws.set(reservation, draw);
    // Grow ahead of need: when a quarter of the lease is left, so calls rarely wait for the database.
    if (!lease.exhausted && lease.free < lease.held / 4n)
      void this.grow(lease, amount, lease.held, false).catch(() => undefined);
    return reservation;
  }

  /**
   * Takes a lease, or waits for the one being taken. A refusal of that one is this call's refusal too when the call
   * needs no more than the call that asked: under contention a call could otherwise wait for one refused opening
   * after another until it gave up with a cause of its own making (the balance) instead of the one that applies.
   */
  private async openLease(
    key: string,
    auth: Extract<AuthContext, { kind: 'apiKey' }>,
    maxCost: Price,
    keyPeriodStart: Date,
  ): Promise<void> {
    const running = this.opening.get(key);
    if (running) {
      return running.done.catch((error: unknown) => {
        const refusal = error instanceof SpendLimitExceededError || error instanceof InsufficientBalanceError;
        if (refusal && maxCost.usd >= running.maxCost.usd && maxCost.diem >= running.maxCost.diem) throw error;
      });
    }
    const done = this.takeLease(key, auth, maxCost, keyPeriodStart).finally(() => this.opening.delete(key));
    this.opening.set(key, { done, maxCost });
    return done;
  }

  private async takeLease(
    key: string,
    auth: Extract<AuthContext, { kind: 'apiKey' }>,
    maxCost: Price,
    keyPeriodStart: Date,
  ): Promise<void> {
    const size = BigInt(this.deps.options.callsPerLease);
    const last = this.lastSize.get(key) ?? 0n;
    const target = { usd: maxNano(maxCost.usd * size, last), diem: maxNano(maxCost.diem * size, last) };
    const op: ReserveOp = {
      kind: 'reserve',
      accountId: auth.accountId,
      apiKeyId: auth.apiKey.id,
      keyPeriodStart,
      maxCost,
      requestId: auth.requestId,
      expiresAt: new Date(Date.now() + this.deps.options.ttlMs),
      lease: { target, holder: this.deps.holder },
    };
    const epoch = this.keyEpochs.get(auth.apiKey.id);
    // Charges waiting for the write timer go first, so the new lease is decided on the account as it stands.
    for (const due of this.dueWrites)
      if (due.reservation.accountId === auth.accountId && due.pending.length > 0 && !due.queued)
        void this.schedule(due).catch(() => undefined);
    let outcome = await this.deps.submit(auth.accountId, op);
    // Refused: the funds may sit unused in leases, this process's on other keys first, then other processes'.
    if (outcome.kind === 'refused' && (await this.reclaim(auth.accountId)))
      outcome = await this.deps.submit(auth.accountId, op);
    if (outcome.kind === 'refused' && (await this.deps.reclaimElsewhere(auth.accountId)))
      outcome = await this.deps.submit(auth.accountId, op);
    if (outcome.kind === 'reserved') {
      const lease = new Lease(key, outcome.reservation, outcome.balanceAfter);
      this.open.set(key, lease);
      this.live.add(lease);
      // Closed at once (the caller takes another) if the process stops, or the key changed while it was decided.
      if (this.closed || this.keyEpochs.get(auth.apiKey.id) !== epoch) this.closeLease(lease);
      return;
    }
    if (outcome.kind === 'refused' && outcome.blockedBy) throw new SpendLimitExceededError(outcome.blockedBy);
    throw new InsufficientBalanceError();
  }

  /** Asks for `min` more (up to the lease's size again) in the next update; resolves when that is written. */
  private grow(lease: Lease, min: Nano, target: Nano, urgent: boolean): Promise<void> {
    const wanted = lease.growWanted;
    lease.growWanted = {
      min: maxNano(min, wanted?.min ?? 0n),
      target: maxNano(maxNano(target, lease.held), wanted?.target ?? 0n),
      urgent: urgent || (wanted?.urgent ?? false),
    };
    return this.schedule(lease);
  }

  /** Waits, in line, for the lease to grow enough for `need` (answered by serveWaiters after an update). */
  private waitForGrowth(lease: Lease, need: Nano, ttlMs: number): Promise<Draw | 'retry' | 'refused'> {
    const waiting = lease.waitInLine(need, ttlMs);
    this.grow(lease, need - lease.free, need, true).catch(() => undefined);
    return waiting;
  }

  /**
   * After an update, before any other is taken: the waiting calls the lease now covers get their draws; if some
   * stay in line, the lease grows again, by at least what they need together.
   */
  private serveWaiters(lease: Lease, failed: boolean): void {
    const left = lease.serveWaiters(failed);
    if (left) this.grow(lease, left.firstNeed - lease.free, left.totalNeed, true).catch(() => undefined);
  }

  /** Queues the lease's settled charges for writing within `writeDelayMs`, together with whatever settles meanwhile. */
  private scheduleWrite(lease: Lease): void {
    if (this.deps.options.writeDelayMs <= 0) {
      void this.schedule(lease).catch(() => undefined);
      return;
    }
    this.dueWrites.add(lease);
    this.writeTimer ??= setTimeout(() => this.writeDue(), this.deps.options.writeDelayMs);
  }

  private writeDue(): void {
    this.writeTimer = undefined;
    for (const lease of this.dueWrites) {
      if (lease.state !== 'closed' && lease.pending.length > 0 && !lease.queued)
        void this.schedule(lease).catch(() => undefined);
    }
    this.dueWrites.clear();
  }

  /** Queues an update of the lease for the next batch (one at a time); resolves when it is written. */
  private schedule(lease: Lease): Promise<void> {
    if (lease.queued) return lease.queued;
    let op: LeaseUpdateOp | undefined;
    const request: LeaseUpdateRequest = {
      kind: 'lease-update',
      take: () => {
        lease.queued = undefined;
        lease.running = done;
        op = lease.takeUpdate(new Date(Date.now() + this.deps.options.ttlMs));
        return op;
      },
      finished: (result) => {
        if (!op) return;
        if (result.ok) {
          this.applied(lease, op, result.value);
          this.serveWaiters(lease, false);
          // Charges settled while this update ran wait for company like any other (writeDelayMs), rather than
          // going at once: back to back, batches under load would be as small and as many as the database is fast.
          if (lease.state === 'open' && lease.pending.length > 0) this.scheduleWrite(lease);
          else if (lease.state === 'closing' && (lease.pending.length > 0 || lease.holds === 0n)) this.schedule(lease);
          return;
        }
        const givenUp = lease.restoreUpdate(op, isRefusedByDatabase(result.error));
        if (givenUp)
          this.deps.logger.error(
            {
              err: result.error,
              leaseId: lease.reservation.id,
              requestId: givenUp.requestId,
              charged: givenUp.charged.toString(),
            },
            'a settled charge cannot be written; given up',
          );
        this.serveWaiters(lease, true);
        this.retryLater(lease, result.error);
      },
    };
    const done: Promise<void> = this.deps.submit(lease.reservation.accountId, request).then(() => undefined);
    done.catch(() => undefined);
    lease.queued = done;
    return done;
  }

  private applied(lease: Lease, op: LeaseUpdateOp, outcome: OpOutcome): void {
    lease.running = undefined;
    this.retryMs = RETRY_MS;
    if (outcome.kind === 'lease') {
      if (op.grow && outcome.grown === 0n) lease.exhausted = true;
      if (outcome.grown > 0n) this.lastSize.set(lease.key, maxNano(this.lastSize.get(lease.key) ?? 0n, outcome.amount));
      const entries = lease.applyUpdate(outcome, op.finish);
      if (op.finish) this.forget(lease);
      if (entries.length > 0) this.deps.committed(entries);
      return;
    }
    // The lease was not held any more (the sweeper freed it after this process stalled): charge directly.
    this.deps.logger.warn(
      { leaseId: lease.reservation.id },
      'a balance lease expired while in use; charging its calls directly',
    );
    const calls = [...lease.sending, ...lease.pending];
    lease.applyUpdate({ amount: 0n, grown: 0n, balanceAfter: lease.knownBalance }, true);
    lease.pending = [];
    lease.pendingCharged = 0n;
    this.forget(lease);
    const charging = this.directCharges.chargeEach(calls, (call) => this.deps.chargeUnheld(lease.reservation, call));
    charging.catch((error: unknown) =>
      this.deps.logger.error(
        { err: error, leaseId: lease.reservation.id },
        'charging the calls of an expired lease failed',
      ),
    );
  }

  private retryLater(lease: Lease, error: unknown): void {
    lease.running = undefined;
    this.deps.logger.error(
      { err: error, leaseId: lease.reservation.id, retryInMs: this.retryMs },
      'writing a balance lease update failed; retrying',
    );
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
    setTimeout(() => {
      if (lease.state !== 'closed' && lease.hasWork) this.schedule(lease);
    }, wait).unref();
  }

  /** Stops new draws on a lease; it gives back what is unused now and ends when its last call is done. */
  private closeLease(lease: Lease): void {
    if (lease.state !== 'open') return;
    lease.state = 'closing';
    if (this.open.get(lease.key) === lease) this.open.delete(lease.key);
    void this.schedule(lease).catch(() => undefined);
  }

  private forget(lease: Lease): void {
    this.live.delete(lease);
    if (this.open.get(lease.key) === lease) this.open.delete(lease.key);
  }

  /** Looks after leases: draws past their timeout, idle and old leases, expiry of the rows. */
  private tick(): void {
    const now = Date.now();
    for (const lease of this.live) {
      for (const draw of lease.draws) {
        if (draw.expiresAt > now) continue;
        this.deps.logger.warn(
          { leaseId: lease.reservation.id },
          'a call held its funds past the reservation timeout; released',
        );
        lease.finishDraw(draw, 'expired');
      }
      if (
        lease.state === 'open' &&
        ((lease.holds === 0n && now - lease.lastDrawAt > this.deps.options.idleMs) ||
          now - lease.openedAt > this.deps.options.maxAgeMs)
      )
        this.closeLease(lease);
      else if (lease.state === 'closing' && lease.holds === 0n) this.schedule(lease);
      else if (now - lease.lastWriteAt > this.deps.options.ttlMs / 3) this.schedule(lease);
    }
  }
}
