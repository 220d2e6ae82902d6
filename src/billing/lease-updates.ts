import { isRefusedByDatabase } from '../db/errors.ts';
import type { Logger } from '../logger.ts';
import type { BatchWriter, DirectCharge, LeaseUpdateRequest } from './batch-writer.ts';
import type { LeaseCall, LeaseUpdateOp, OpOutcome } from './billing-ops.ts';
import type { Reservation, SettledCharge } from './billing.types.ts';
import { DirectCharges } from './direct-charges.ts';
import { publishEntries } from './holds.ts';
import type { Lease } from './lease.ts';
import type { LeaseOptions } from './lease-options.ts';
import { maxNano, type Nano } from './money.ts';
import type { UsagePublisher } from './usage.types.ts';

const RETRY_MS = 200;
const MAX_RETRY_MS = 5_000;

/** This process's leases: the open one of each (account, key, key period), and every one not yet ended. */
export class LeaseBook {
  readonly open = new Map<string, Lease>();
  readonly live = new Set<Lease>();
  /** The lease size that served each (account, key, key period) last, so a renewed lease starts as large. */
  readonly lastSize = new Map<string, Nano>();

  add(lease: Lease): void {
    this.open.set(lease.key, lease);
    this.live.add(lease);
  }

  /** No new draws from it (it is closing). */
  unlist(lease: Lease): void {
    if (this.open.get(lease.key) === lease) this.open.delete(lease.key);
  }

  forget(lease: Lease): void {
    this.live.delete(lease);
    this.unlist(lease);
  }
}

export interface LeaseUpdatesDeps {
  readonly writer: Pick<BatchWriter, 'submit' | 'chargeUnheld'>;
  readonly book: LeaseBook;
  readonly logger: Logger;
  readonly options: LeaseOptions;
  readonly publisher?: UsagePublisher;
}

/**
 * Writes leases: queues each lease's updates (its settled charges, growth, giving back) to the batch writer, one at
 * a time, applies each to its Lease when its batch ends, retries failed ones, and charges outside the lease the calls
 * of a lease the database holds no more. Committed usage entries go to the publisher.
 */
export class LeaseUpdates {
  /** Leases with settled charges waiting for the write timer. */
  private readonly dueWrites = new Set<Lease>();
  private writeTimer: NodeJS.Timeout | undefined;
  /** Charges of calls whose lease was gone, being written directly (close() and flush() wait for them). */
  readonly direct: DirectCharges;
  private retryMs = RETRY_MS;
  /** Leases with a retry timer set: one at a time each, whatever else asked for an update meanwhile. */
  private readonly retrying = new Set<Lease>();
  private stopped = false;

  constructor(private readonly deps: LeaseUpdatesDeps) {
    this.direct = new DirectCharges(deps.logger);
  }

  /** Asks for `min` more (up to the lease's size again) in the next update; resolves when that is written. */
  grow(lease: Lease, min: Nano, target: Nano, urgent: boolean): Promise<void> {
    lease.wantGrowth(min, target, urgent);
    return this.schedule(lease);
  }

  /** Stops new draws on a lease; it gives back what is unused now and ends when its last call is done. */
  closeLease(lease: Lease): void {
    if (!lease.close()) return;
    this.deps.book.unlist(lease);
    void this.schedule(lease).catch(() => undefined);
  }

  /** Gives back the unused part of this process's leases on an account (another process asked, or a call was refused). */
  async reclaim(accountId: string): Promise<boolean> {
    // Funds an update in flight is giving back (an idle lease ending) count too: they are back once it is written.
    const unused = () =>
      [...this.deps.book.live].filter(
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

  /**
   * Charges a settled call outside its lease (the lease ended, or cannot take it), from free funds, retried while
   * the database is out of reach; `failed` runs if it is not charged in the end.
   */
  chargeOutside(held: Reservation, call: LeaseCall, failed: () => void): Promise<SettledCharge> {
    const charging = this.direct
      .retryTransient(() => this.chargeOnce(held, call))
      .catch((error: unknown) => {
        failed();
        throw error;
      });
    return this.direct.track(charging).then((done) => done.charge);
  }

  private async chargeOnce(held: Reservation, call: LeaseCall): Promise<DirectCharge> {
    const done = await this.deps.writer.chargeUnheld(held, call);
    publishEntries(this.deps, done.entries, held.id);
    // Recorded as debt: this process's leases on the account lend no more, so it is refused until topped up.
    if (done.debt) setImmediate(() => void this.reclaim(held.accountId).catch(() => undefined));
    return done;
  }

  /** Queues the lease's settled charges for writing within `writeDelayMs`, together with whatever settles meanwhile. */
  scheduleWrite(lease: Lease): void {
    if (this.deps.options.writeDelayMs <= 0) {
      void this.schedule(lease).catch(() => undefined);
      return;
    }
    this.dueWrites.add(lease);
    this.writeTimer ??= setTimeout(() => this.writeDue(), this.deps.options.writeDelayMs);
  }

  /** Sends at once the charges of an account's leases that wait for the write timer. */
  writeDueOf(accountId: string): void {
    for (const due of this.dueWrites)
      if (due.reservation.accountId === accountId && due.pendingCount > 0 && !due.queued)
        void this.schedule(due).catch(() => undefined);
  }

  /** A failed update of the lease waits for its retry timer (the tick leaves it alone meanwhile). */
  isRetrying(lease: Lease): boolean {
    return this.retrying.has(lease);
  }

  /** Stops the write timer (shutdown: close() writes every lease itself). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.writeTimer);
    this.dueWrites.clear();
  }

  private writeDue(): void {
    this.writeTimer = undefined;
    for (const lease of this.dueWrites) {
      if (lease.state !== 'closed' && lease.pendingCount > 0 && !lease.queued)
        void this.schedule(lease).catch(() => undefined);
    }
    this.dueWrites.clear();
  }

  /** Queues an update of the lease for the next batch (one at a time); resolves when it is written. */
  schedule(lease: Lease): Promise<void> {
    if (lease.queued) return lease.queued;
    let op: LeaseUpdateOp | undefined;
    const request: LeaseUpdateRequest = {
      kind: 'lease-update',
      take: () => {
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
          if (lease.state === 'open' && lease.pendingCount > 0) this.scheduleWrite(lease);
          else if (lease.state === 'closing' && (lease.pendingCount > 0 || lease.holds === 0n)) this.schedule(lease);
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
    const done: Promise<void> = this.deps.writer.submit(lease.reservation.accountId, request).then(() => undefined);
    done.catch(() => undefined);
    lease.updateQueued(done);
    return done;
  }

  /**
   * After an update, before any other is taken: the waiting calls the lease now covers get their draws; if some
   * stay in line, the lease grows again, by at least what they need together.
   */
  private serveWaiters(lease: Lease, failed: boolean): void {
    const left = lease.serveWaiters(failed);
    if (left) this.grow(lease, left.firstNeed - lease.free, left.totalNeed, true).catch(() => undefined);
  }

  private applied(lease: Lease, op: LeaseUpdateOp, outcome: OpOutcome): void {
    this.retryMs = RETRY_MS;
    const { book } = this.deps;
    if (outcome.kind === 'lease') {
      if (outcome.grown > 0n) book.lastSize.set(lease.key, maxNano(book.lastSize.get(lease.key) ?? 0n, outcome.amount));
      const entries = lease.applyUpdate(op, outcome);
      if (op.finish) book.forget(lease);
      publishEntries(this.deps, entries, entries[0]?.reservationId ?? '');
      return;
    }
    // The lease was not held any more (the sweeper freed it after this process stalled): charge directly.
    this.deps.logger.warn(
      { leaseId: lease.reservation.id },
      'a balance lease expired while in use; charging its calls directly',
    );
    const calls = lease.endUnheld();
    book.forget(lease);
    const charging = this.direct.chargeEach(calls, (call) => this.chargeOnce(lease.reservation, call));
    charging.catch((error: unknown) =>
      this.deps.logger.error(
        { err: error, leaseId: lease.reservation.id },
        'charging the calls of an expired lease failed',
      ),
    );
  }

  /**
   * One retry timer per lease: updates asked for meanwhile (the tick, a flush) fail on their own without arming
   * another, so an outage costs one timer and one log line per lease and backoff step, not one more each time.
   * After stop(), close() retries itself, a few rounds, and nothing is retried later.
   */
  private retryLater(lease: Lease, error: unknown): void {
    if (this.stopped || this.retrying.has(lease)) return;
    this.deps.logger.error(
      { err: error, leaseId: lease.reservation.id, retryInMs: this.retryMs },
      'writing a balance lease update failed; retrying',
    );
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
    this.retrying.add(lease);
    setTimeout(() => {
      this.retrying.delete(lease);
      if (!this.stopped && lease.state !== 'closed' && lease.hasWork) void this.schedule(lease).catch(() => undefined);
    }, wait).unref();
  }
}
