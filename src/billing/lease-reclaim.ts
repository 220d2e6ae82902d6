import { sql } from 'kysely';
import type { Database } from '../db/database.ts';
import type { EventBus } from '../events/event-bus.ts';
import type { Logger } from '../logger.ts';
import type { LeasePeers } from './leased-holds.ts';

const TOPIC = 'lagoon:lease-reclaim';
/** How long a refused call waits for other processes to give back their unused leases before it retries. */
const WAIT_MS = 100;

/**
 * Between processes (REDIS_URL): a call refused for lack of funds while other processes hold leases on its account
 * asks them, over the event bus, to give back what they do not use, then retries once. In one process there is
 * nobody to ask.
 */
export class LeaseReclaim implements LeasePeers {
  constructor(private readonly deps: { db: Database; events: EventBus; logger: Logger; holder: string }) {}

  /** Resolves true when other processes held leases on the account and were asked for them. */
  readonly reclaimElsewhere = async (accountId: string): Promise<boolean> => {
    if (this.deps.events.kind === 'memory') return false;
    const others = await sql<{ found: number }>`
      select 1 as found from reservations
      where account_id = ${accountId} and status = 'held' and lease_holder is not null and lease_holder <> ${this.deps.holder}
      limit 1`.execute(this.deps.db);
    if (others.rows.length === 0) return false;
    this.deps.events.publish(TOPIC, 'all', { accountId, origin: this.deps.holder });
    await new Promise((resolve) => setTimeout(resolve, WAIT_MS));
    return true;
  };

  /** Gives back this process's unused leases when another process asks (the leased holds call it as they start). */
  answer(giveBack: (accountId: string) => Promise<unknown>): void {
    if (this.deps.events.kind === 'memory') return;
    const subscription = this.deps.events.subscribe(TOPIC, 'all');
    void (async () => {
      try {
        for await (const { accountId, origin } of subscription) {
          if (origin !== this.deps.holder)
            void giveBack(accountId).catch((error: unknown) =>
              this.deps.logger.error({ err: error, accountId }, 'giving back balance leases failed'),
            );
        }
      } catch (error) {
        this.deps.logger.error({ err: error }, 'balance lease reclaims stopped; unused leases now return when idle');
      }
    })();
  }
}
