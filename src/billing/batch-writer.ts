import type { Transaction } from 'kysely';
import { transactionCommitted } from '../db/commit-status.ts';
import type { Database } from '../db/database.ts';
import { isConnectionLost } from '../db/errors.ts';
import type { DB } from '../db/types.generated.ts';
import type { Logger } from '../logger.ts';
import type { BillingMetrics } from '../observability/app-metrics.ts';
import {
  accountsOf,
  entriesOf,
  firstSettles,
  keySpendRowsOf,
  leaseUpdatesOf,
  missingReserveRows,
  planBatch,
  settleWinners,
} from './billing-batch.ts';
import type { BillingOp, LeaseCall, LeaseUpdateOp, OpOutcome, SettleOp } from './billing-ops.ts';
import * as batchRepo from './billing-batch.repository.ts';
import * as repo from './billing.repository.ts';
import { limitGroupOf, type Reservation, type SettledCharge } from './billing.types.ts';
import { GroupCommitQueue, type ItemOutcome } from './group-commit.ts';
import { utcDay } from './periods.ts';
import type { SettledUsageEntry } from './usage.types.ts';

/**
 * An update of a lease, handed to the writer rather than built in advance: `take` is called when its batch starts,
 * so that it carries every charge settled until then, and `finished` as soon as the batch ends, before the next
 * batch takes the lease's next update (lease-updates.ts builds them).
 */
export interface LeaseUpdateRequest {
  readonly kind: 'lease-update';
  readonly take: () => LeaseUpdateOp;
  readonly finished: (result: ItemOutcome<OpOutcome>) => void;
}

/** A charge written outside any hold, and whether it took the balance below zero (recorded as debt). */
export interface DirectCharge {
  readonly charge: SettledCharge;
  readonly entries: readonly SettledUsageEntry[];
  readonly debt: boolean;
}

/**
 * The bottom of the money core: writes reserve and settle calls and lease updates to the database, and knows nothing
 * of who asked. Reserve, settle and lease updates run in batches (group commit): calls that arrive while the previous
 * batch of their lane is committing share the next transaction (one round of statements and one WAL flush for all),
 * decided in the same order and with the same checks as one call at a time.
 */
export class BatchWriter {
  /** Reserve and settle calls, grouped into one transaction per batch; an account's lane is fixed by its id. */
  private readonly queue = new GroupCommitQueue<BillingOp | LeaseUpdateRequest, OpOutcome>((_lane, items) =>
    this.runItems(items),
  );

  /**
   * `lanes`: how many batches may run at once (default 1: on two cores fewer, larger batches serve more calls per
   * second, also spread over many accounts). An account always goes to the same lane, so its calls never run in two
   * transactions at once; batches of different lanes never touch the same rows.
   */
  constructor(
    private readonly deps: { db: Database; logger: Logger; lanes?: number; metrics?: BillingMetrics | undefined },
  ) {}

  /** Runs a call or a lease update in its account's next batch. */
  submit(accountId: string, op: BillingOp | LeaseUpdateRequest): Promise<OpOutcome> {
    return this.queue.submit(this.laneOf(accountId), op);
  }

  /** A batch's items: lease updates are taken when it starts and told when it ends, before the next one starts. */
  private async runItems(items: readonly (BillingOp | LeaseUpdateRequest)[]): Promise<ItemOutcome<OpOutcome>[]> {
    const ops = items.map((item) => (item.kind === 'lease-update' ? item.take() : item));
    const started = performance.now();
    let outcomes: ItemOutcome<OpOutcome>[];
    try {
      outcomes = await this.runBatch(ops);
    } catch (error) {
      outcomes = ops.map(() => ({ ok: false, error }));
    }
    if (this.deps.metrics) {
      const leaseUpdates = items.reduce((count, item) => count + (item.kind === 'lease-update' ? 1 : 0), 0);
      const ok = outcomes.some((outcome) => outcome.ok);
      this.deps.metrics.observeBillingBatch(
        items.length - leaseUpdates,
        leaseUpdates,
        (performance.now() - started) / 1000,
        ok,
      );
    }
    items.forEach((item, index) => {
      if (item.kind === 'lease-update')
        item.finished(
          outcomes[index] ?? { ok: false, error: new Error('The batch returned no outcome for this update') },
        );
    });
    return outcomes;
  }

  /** Account ids are random UUIDs: their last hex digits spread accounts evenly over the lanes. */
  private laneOf(accountId: string): string {
    return String(Number.parseInt(accountId.slice(-4), 16) % (this.deps.lanes ?? 1));
  }

  /**
   * One batch of reserve and settle calls, in one transaction of four round trips whatever its size: BEGIN; one
   * statement that claims the settled reservations, records their usage and locks the balance and key spend rows;
   * the decisions, in memory (billing-batch.ts); one statement that writes them; COMMIT.
   */
  private async runBatch(ops: readonly BillingOp[]): Promise<ItemOutcome<OpOutcome>[]> {
    const decided: { xid?: string; outcomes?: OpOutcome[] } = {};
    try {
      const outcomes = await this.deps.db.transaction().execute(async (trx) => {
        const candidates = firstSettles(ops);
        const spendRows = keySpendRowsOf(ops);
        const locks = await batchRepo.claimAndLock(
          trx,
          accountsOf(ops),
          entriesOf(ops, candidates),
          spendRows,
          leaseUpdatesOf(ops),
        );
        let spends = locks.spends;
        const missing = missingReserveRows(ops, spends);
        if (missing.length > 0) {
          // A key's first reservation of a period: create its row, then lock it like the others.
          await batchRepo.ensureKeySpendRows(trx, missing);
          spends = await batchRepo.lockKeySpend(trx, spendRows);
        }
        const winners = settleWinners(ops, candidates, locks.claimed);
        const plan = planBatch(ops, winners, locks.balances, spends, locks.leases);
        await batchRepo.writeBatch(trx, plan);
        decided.xid = locks.xid;
        decided.outcomes = plan.outcomes;
        return plan.outcomes;
      });
      return outcomes.map((value) => ({ ok: true, value }));
    } catch (error) {
      // The connection broke during COMMIT: the batch may be written. Sent again, its lease charges would be
      // charged twice, and given up, lost; so the database is asked what became of it.
      if (decided.xid && decided.outcomes && isConnectionLost(error)) {
        const committed = await transactionCommitted(this.deps.db, decided.xid);
        this.deps.logger.warn(
          { calls: ops.length, committed: committed ?? 'unknown' },
          'the connection was lost during a billing batch commit',
        );
        if (committed) return decided.outcomes.map((value) => ({ ok: true, value }));
        // Unknown (the database stayed away): sent again below and later, a lease update already written is
        // refused (its usage entries exist), so it is never charged twice.
      }
      if (ops.length === 1) return [{ ok: false, error }];
      // Nothing of the batch was written; run each call alone so that one call's failure stays its own.
      this.deps.logger.warn({ err: error, calls: ops.length }, 'billing batch failed; running its calls one by one');
      const alone: ItemOutcome<OpOutcome>[] = [];
      for (const op of ops) alone.push(...(await this.runBatch([op])));
      return alone;
    }
  }

  /**
   * A settlement whose reservation was not held any more: either it was settled already (nothing to do) or the
   * sweeper released it while the call was still running, and then the charge is taken if the balance allows.
   */
  settleLate(op: SettleOp): Promise<DirectCharge> {
    const { reservation } = op;
    return this.deps.db.transaction().execute(async (trx) => {
      // released → settled, so that a second late settlement finds it settled and charges nothing.
      const claimed = await repo.finishReservation(trx, reservation.id, 'settled', 'released');
      if (!claimed) {
        const status = await repo.reservationStatus(trx, reservation.id);
        if (status !== 'settled')
          throw new Error(`Reservation ${reservation.id} cannot be settled (status ${status ?? 'missing'})`);
        return {
          charge: {
            reservationId: reservation.id,
            currency: reservation.currency,
            charged: 0n,
            balanceAfter: 0n,
            usageEntryIds: [],
            alreadySettled: true,
          },
          entries: [],
          debt: false,
        };
      }
      return this.chargeIn(trx, reservation, {
        charged: op.charged,
        entries: op.entries,
        requestId: reservation.requestId,
        modelId: op.modelId,
        createdAt: op.createdAt,
      });
    });
  }

  /** Charges a call whose hold is gone, in its own transaction, if the balance allows. */
  chargeUnheld(held: Reservation, call: LeaseCall): Promise<DirectCharge> {
    return this.deps.db.transaction().execute((trx) => this.chargeIn(trx, held, call));
  }

  /**
   * Charges a call whose hold is gone; when the balance no longer covers it, the charge is recorded as debt (the
   * balance goes negative, which refuses new calls until a top-up) rather than dropped.
   */
  private async chargeIn(trx: Transaction<DB>, held: Reservation, call: LeaseCall): Promise<DirectCharge> {
    const { charged } = call;
    let debt = false;
    let balanceAfter = await repo.chargeIfAvailable(trx, held.accountId, held.currency, charged);
    if (balanceAfter === undefined) {
      balanceAfter = await repo.chargeAsDebt(trx, held.accountId, held.currency, charged);
      if (balanceAfter === undefined)
        throw new Error(`Account ${held.accountId} has no ${held.currency} balance to charge`);
      this.deps.logger.warn(
        {
          reservationId: held.id,
          accountId: held.accountId,
          charged: charged.toString(),
          balanceAfter: balanceAfter.toString(),
        },
        'a late settlement exceeded the balance; recorded as debt',
      );
      debt = true;
    }
    if (held.apiKeyId && held.keyPeriodStart) {
      await repo.settleKeySpend(trx, held.apiKeyId, held.keyPeriodStart, limitGroupOf(held.currency), charged, 0n);
    }
    await repo.insertUsageEntries(trx, call.entries);
    await repo.addToDailyRollups(trx, utcDay(call.createdAt), call.entries);
    if (charged > 0n) {
      await repo.insertLedgerEntry(trx, {
        accountId: held.accountId,
        currency: held.currency,
        amount: -charged,
        balanceAfter,
        type: 'CHARGE',
        requestId: call.requestId,
        modelId: call.modelId,
        createdAt: call.createdAt,
      });
    }
    const charge: SettledCharge = {
      reservationId: held.id,
      currency: held.currency,
      charged,
      balanceAfter,
      usageEntryIds: call.entries.map((entry) => entry.id),
      alreadySettled: false,
    };
    return { charge, entries: call.entries, debt };
  }
}
