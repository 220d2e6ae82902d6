import { randomUUID } from 'node:crypto';
import type { Database } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import { BatchWriter } from './batch-writer.ts';
import { BillingService, type BillingObservers, type BillingOptions } from './billing.service.ts';
import { TransactionHolds } from './holds.ts';
import { LeasedHolds, NO_LEASE_PEERS, type LeasePeers } from './leased-holds.ts';
import type { LeaseOptions } from './lease-options.ts';
import type { UsagePublisher } from './usage.types.ts';

export interface BillingChoice extends BillingOptions {
  /** How many billing batches may run at once (batch-writer.ts; default 1). */
  readonly batchLanes?: number;
  /**
   * Balance leases (LAGOON_BALANCE_LEASES, leased-holds.ts): calls draw their holds in memory and their settlements
   * are written after the answer. Without it every call holds and settles in the database before it returns.
   */
  readonly leases?: LeaseOptions & {
    /** The other processes holding leases (none: this process alone). */
    readonly peers?: LeasePeers;
    /** This process's name on its lease rows. */
    readonly holder?: string;
  };
}

/** The money core, wired: one batch writer under the holds this process uses, under the billing service. */
export function createBilling(deps: {
  db: Database;
  logger: Logger;
  options: BillingChoice;
  publisher?: UsagePublisher;
  /** The app's metrics and call log (none in tests that build the money core alone). */
  observers?: BillingObservers;
}): BillingService {
  const { db, logger, options, publisher, observers } = deps;
  const writer = new BatchWriter({ db, logger, lanes: options.batchLanes, metrics: observers?.metrics });
  const perCall = new TransactionHolds({ db, writer, logger, publisher });
  const leases = options.leases;
  const holds = leases
    ? new LeasedHolds({
        writer,
        perCall,
        logger,
        publisher,
        options: leases,
        holder: leases.holder ?? randomUUID(),
        peers: leases.peers ?? NO_LEASE_PEERS,
      })
    : perCall;
  return new BillingService({
    db,
    logger,
    holds,
    options: { reservationTimeoutMs: options.reservationTimeoutMs, walletMinimumBalance: options.walletMinimumBalance },
    ...observers,
  });
}
