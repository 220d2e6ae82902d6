import { randomUUID } from 'node:crypto';
import { keyOf, type AccountAuthContext } from '../auth/auth-context.ts';
import { InsufficientBalanceError, SpendLimitExceededError } from '../errors.ts';
import type { LeaseCall, ReserveOp } from './billing-ops.ts';
import { priceIn, type Price, type Reservation, type SettledCharge } from './billing.types.ts';
import { payerFields, type Holds, type ReserveOptions } from './holds.ts';
import { Lease, type Draw } from './lease.ts';
import { LeaseBook, LeaseUpdates, type LeaseUpdatesDeps } from './lease-updates.ts';
import { maxNano, type Currency, type Nano } from './money.ts';
import { periodStart } from './periods.ts';

const MAX_ATTEMPTS = 64;
/**
 * A lease with this many settled charges not yet written makes its next call wait for a write: callers faster than
 * the database (the embedded one runs in a thread of its own and takes no time from them) slow to its pace, instead
 * of piling up charges that a crash would lose.
 */
const MAX_UNWRITTEN_CALLS = 2_000;

/** A call taking a lease: the lease's key, the caller, its worst case, and a wallet's minimum balance. */
interface LeaseAsk {
  readonly key: string;
  readonly auth: AccountAuthContext;
  readonly maxCost: Price;
  readonly now: Date;
  readonly minimumFree?: Nano | undefined;
}

/** The other processes that hold leases (lease-reclaim.ts, over the event bus): this one asks them, and answers them. */
export interface LeasePeers {
  /** Asks the others to give back the unused part of their leases on an account; resolves when worth retrying. */
  reclaimElsewhere(accountId: string): Promise<boolean>;
  /** From now on, when another process asks, `giveBack` returns this process's unused leases on the account. */
  answer(giveBack: (accountId: string) => Promise<unknown>): void;
}

/** One process alone: nobody to ask, nobody asking. */
export const NO_LEASE_PEERS: LeasePeers = { reclaimElsewhere: async () => false, answer: () => undefined };

export interface LeasedHoldsDeps extends Omit<LeaseUpdatesDeps, 'book'> {
  readonly peers: LeasePeers;
  /** This process's name on its lease rows. */
  readonly holder: string;
  /** For reservations not drawn from a lease (the sweeper's expired rows). */
  readonly perCall?: Holds;
}

/**
 * Balance leases: the hot path of paid calls without a database round trip. A process takes a lease (a held
 * reservation of a share of an account's balance and key limit, at most a quarter of what is free, in the currency
 * the charging order picks) and draws each call's worst case from it in memory; settlements are charged against the
 * lease in the next billing batch, after the answer (lease-updates.ts writes them). A balance or key limit still
 * never goes below zero: every draw is covered by funds the database holds for this process. A process that dies
 * leaves its lease to expire; the sweeper gives it back (charges not yet written are lost, in the customer's favour).
 * A process refused for lack of funds first takes back its own leases on the account, then asks the others for theirs.
 */
export class LeasedHolds implements Holds {
  private readonly book = new LeaseBook();
  private readonly updates: LeaseUpdates;
  /** Leases being taken, with the worst case of the call taking each (calls that need no more share its refusal). */
  private readonly opening = new Map<string, { readonly done: Promise<void>; readonly maxCost: Price }>();
  /** The draws behind the reservations handed out (by object: callers hand the same object back). */
  private readonly draws = new WeakMap<object, Draw>();
  /** Bumped by closeKey: a lease decided before its key changed is not lent from (its limit may be stale). */
  private readonly keyEpochs = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly deps: LeasedHoldsDeps) {
    this.updates = new LeaseUpdates({ ...deps, book: this.book });
    deps.peers.answer((accountId) => this.reclaim(accountId));
    this.timer = setInterval(() => this.tick(), deps.options.tickMs);
    this.timer.unref();
  }

  /** Holds `maxCost` for a call from this process's lease, taking or growing the lease when it does not cover it. */
  async reserve(
    auth: AccountAuthContext,
    maxCost: Price,
    ttlMs: number,
    options: ReserveOptions = {},
  ): Promise<Reservation> {
    // A hold another process may settle (a queued job's) cannot live in this process's lease: held per call instead.
    if (options.durable && this.deps.perCall) return this.deps.perCall.reserve(auth, maxCost, ttlMs, options);
    const apiKey = keyOf(auth);
    // A wallet's lease is its account's (USD only, no key limits); a key's is per key and limit period.
    const now = new Date();
    const keyPeriodStart = apiKey ? periodStart(apiKey.limitPeriod, now) : null;
    const key = apiKey ? `${auth.accountId}/${apiKey.id}/${keyPeriodStart?.getTime()}` : `${auth.accountId}/wallet`;
    const behind = this.book.open.get(key);
    if (behind && behind.pendingCount >= MAX_UNWRITTEN_CALLS)
      await this.updates.schedule(behind).catch(() => undefined);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
      const lease = this.book.open.get(key);
      if (!lease) {
        await this.openLease({ key, auth, maxCost, now, minimumFree: options.minimumFree });
        continue;
      }
      // A wallet's minimum balance (docs/api.md, Wallet callers) is checked at every call, not only when a lease is
      // taken: a lease lent from while the credit runs below it would serve calls the database would refuse. The
      // in-memory credit may be stale (a top-up in another process): the lease is given back and a new take decides.
      const minimum = options.minimumFree ?? 0n;
      if (minimum > 0n && lease.balanceEstimate - lease.holds < minimum) {
        this.updates.closeLease(lease);
        continue;
      }
      const need = priceIn(maxCost, lease.reservation.currency);
      if (lease.free >= need) return this.reservationOf(lease, lease.draw(need, Date.now() + ttlMs), auth.requestId);
      const waited = lease.exhausted ? 'refused' : await this.waitForGrowth(lease, need, ttlMs);
      if (waited === 'refused') this.updates.closeLease(lease);
      else if (waited !== 'retry') return this.reservationOf(lease, waited, auth.requestId);
    }
    throw new InsufficientBalanceError();
  }

  /**
   * Charges a drawn call (written in the next batch). When its lease cannot take the charge any more (ended, or
   * ending), it is charged at once, from free funds; either way a call is charged once however often it is settled.
   */
  async settle(reservation: Reservation, call: LeaseCall): Promise<SettledCharge> {
    if (!reservation.leaseId && this.deps.perCall) return this.deps.perCall.settle(reservation, call);
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
      const { undo } = lease.settleOutside(draw);
      return this.updates.chargeOutside(reservation, call, undo);
    }
    lease.finishDraw(draw, 'settled', call);
    // A closing lease gives its funds back with this write: no waiting for company.
    if (lease.state === 'open') this.updates.scheduleWrite(lease);
    else void this.updates.schedule(lease).catch(() => undefined);
    return { ...base, charged: call.charged, balanceAfter: lease.balanceEstimate, alreadySettled: false };
  }

  /** Moves a running call's timeout (its lease is kept alive by its own updates); false once the draw is not held. */
  async extend(reservation: Reservation, ttlMs: number): Promise<boolean> {
    if (!reservation.leaseId && this.deps.perCall) return this.deps.perCall.extend(reservation, ttlMs);
    const draw = this.draws.get(reservation);
    return draw ? draw.lease.extendDraw(draw, Date.now() + ttlMs) : false;
  }

  /** Gives a drawn call's hold back (the call failed before producing anything). */
  async release(reservation: Pick<Reservation, 'id' | 'leaseId'>): Promise<boolean> {
    if (!reservation.leaseId) return this.deps.perCall?.release(reservation) ?? false;
    const draw = this.draws.get(reservation);
    if (!draw || draw.status !== 'held') return false;
    draw.lease.finishDraw(draw, 'released');
    if (draw.lease.state === 'closing' && draw.lease.holds === 0n) void this.updates.schedule(draw.lease);
    return true;
  }

  /** Waits until every charge of the account settled so far is written (reads of usage and balances call this). */
  async flush(accountId?: string): Promise<void> {
    for (const lease of this.book.live) {
      if (accountId !== undefined && lease.reservation.accountId !== accountId) continue;
      for (let round = 0; round < 3 && lease.unwritten; round += 1) {
        if (lease.pendingCount > 0) void this.updates.schedule(lease);
        await (lease.pendingCount > 0 ? lease.queued : lease.running)?.catch(() => undefined);
      }
    }
    await this.updates.direct.settled();
  }

  /** What this process holds in leases on an account and no running call uses, per currency (to show true holds). */
  unusedHeld(accountId: string): Map<Currency, Nano> {
    const unused = new Map<Currency, Nano>();
    for (const lease of this.book.live) {
      if (lease.reservation.accountId !== accountId) continue;
      const { currency } = lease.reservation;
      unused.set(currency, (unused.get(currency) ?? 0n) + lease.unused);
    }
    return unused;
  }

  /** Gives back the unused part of this process's leases on an account (another process asked, or a call was refused). */
  reclaim(accountId: string): Promise<boolean> {
    return this.updates.reclaim(accountId);
  }

  /** Ends the leases of a key whose limits changed (or that was deleted): the next call is decided afresh. */
  closeKey(apiKeyId: string): void {
    this.keyEpochs.set(apiKeyId, (this.keyEpochs.get(apiKeyId) ?? 0) + 1);
    for (const lease of this.book.live) if (lease.reservation.apiKeyId === apiKeyId) this.updates.closeLease(lease);
  }

  /** Writes every pending charge and ends every lease (shutdown). Calls still running are charged directly later. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.updates.stop();
    for (const lease of this.book.live) {
      // Calls still running when the process stops lose their hold; their settlements are charged directly.
      for (const draw of [...lease.draws]) lease.finishDraw(draw, 'expired');
      this.updates.closeLease(lease);
    }
    for (let round = 0; round < 5 && this.book.live.size > 0; round += 1) {
      await Promise.all([...this.book.live].map((lease) => (lease.queued ?? lease.running)?.catch(() => undefined)));
      for (const lease of this.book.live) if (!lease.queued && !lease.running) void this.updates.schedule(lease);
    }
    // The database closes after this: charges being written directly must be in it first.
    await this.updates.direct.settled(true);
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
      void this.updates.grow(lease, amount, lease.held, false).catch(() => undefined);
    return reservation;
  }

  /**
   * Takes a lease, or waits for the one being taken. A refusal of that one is this call's refusal too when the call
   * needs no more than the call that asked: under contention a call could otherwise wait for one refused opening
   * after another until it gave up with a cause of its own making (the balance) instead of the one that applies.
   */
  private async openLease(ask: LeaseAsk): Promise<void> {
    const { key, maxCost } = ask;
    const running = this.opening.get(key);
    if (running) {
      return running.done.catch((error: unknown) => {
        const refusal = error instanceof SpendLimitExceededError || error instanceof InsufficientBalanceError;
        if (refusal && maxCost.usd >= running.maxCost.usd && maxCost.diem >= running.maxCost.diem) throw error;
      });
    }
    const done = this.takeLease(ask).finally(() => this.opening.delete(key));
    this.opening.set(key, { done, maxCost });
    return done;
  }

  private async takeLease({ key, auth, maxCost, now, minimumFree }: LeaseAsk): Promise<void> {
    const size = BigInt(this.deps.options.callsPerLease);
    const last = this.book.lastSize.get(key) ?? 0n;
    const target = { usd: maxNano(maxCost.usd * size, last), diem: maxNano(maxCost.diem * size, last) };
    const op: ReserveOp = {
      kind: 'reserve',
      accountId: auth.accountId,
      ...payerFields(auth, now, minimumFree),
      maxCost,
      requestId: auth.requestId,
      expiresAt: new Date(Date.now() + this.deps.options.ttlMs),
      lease: { target, holder: this.deps.holder },
    };
    const apiKeyId = keyOf(auth)?.id;
    const epoch = apiKeyId === undefined ? undefined : this.keyEpochs.get(apiKeyId);
    // Charges waiting for the write timer go first, so the new lease is decided on the account as it stands.
    this.updates.writeDueOf(auth.accountId);
    const { writer } = this.deps;
    let outcome = await writer.submit(auth.accountId, op);
    // Refused: the funds may sit unused in leases, this process's on other keys first, then other processes'.
    if (outcome.kind === 'refused' && (await this.reclaim(auth.accountId)))
      outcome = await writer.submit(auth.accountId, op);
    if (outcome.kind === 'refused' && (await this.deps.peers.reclaimElsewhere(auth.accountId)))
      outcome = await writer.submit(auth.accountId, op);
    if (outcome.kind === 'reserved') {
      const lease = new Lease(key, outcome.reservation, outcome.balanceAfter);
      this.book.add(lease);
      // Closed at once (the caller takes another) if the process stops, or the key changed while it was decided.
      if (this.closed || (apiKeyId !== undefined && this.keyEpochs.get(apiKeyId) !== epoch))
        this.updates.closeLease(lease);
      return;
    }
    if (outcome.kind === 'refused' && outcome.blockedBy) throw new SpendLimitExceededError(outcome.blockedBy);
    throw new InsufficientBalanceError();
  }

  /** Waits, in line, for the lease to grow enough for `need` (answered by serveWaiters after an update). */
  private waitForGrowth(lease: Lease, need: Nano, ttlMs: number): Promise<Draw | 'retry' | 'refused'> {
    const waiting = lease.waitInLine(need, ttlMs);
    this.updates.grow(lease, need - lease.free, need, true).catch(() => undefined);
    return waiting;
  }

  /** Looks after leases: draws past their timeout, idle and old leases, expiry of the rows. */
  private tick(): void {
    const now = Date.now();
    const { options, logger } = this.deps;
    for (const lease of this.book.live) {
      for (const draw of lease.draws) {
        if (draw.expiresAt > now) continue;
        logger.warn({ leaseId: lease.reservation.id }, 'a call held its funds past the reservation timeout; released');
        lease.finishDraw(draw, 'expired');
      }
      if (
        lease.state === 'open' &&
        ((lease.holds === 0n && now - lease.lastDrawAt > options.idleMs) || now - lease.openedAt > options.maxAgeMs)
      )
        this.updates.closeLease(lease);
      else if (this.updates.isRetrying(lease)) continue;
      else if (lease.state === 'closing' && lease.holds === 0n) void this.updates.schedule(lease);
      else if (now - lease.lastWriteAt > options.ttlMs / 3) void this.updates.schedule(lease);
    }
  }
}
