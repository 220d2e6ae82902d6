import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Database } from './database.ts';
import { isConnectionLost } from './errors.ts';

const FIRST_WAIT_MS = 50;
const MAX_WAIT_MS = 2_000;
/** About 30 s of asking in all: a restart or a failover is usually over by then. */
const ATTEMPTS = 20;

/**
 * Whether transaction `xid` (pg_current_xact_id() inside it) committed, for a COMMIT whose connection was lost
 * before its answer came: asked again while the database cannot be reached. `undefined` when it cannot be told
 * (the database stayed away, or the transaction is still running on a connection the server has not noticed
 * is gone).
 */
export async function transactionCommitted(db: Database, xid: string): Promise<boolean | undefined> {
  for (
    let attempt = 1, wait = FIRST_WAIT_MS;
    attempt <= ATTEMPTS;
    attempt += 1, wait = Math.min(wait * 2, MAX_WAIT_MS)
  ) {
    try {
      const { rows } = await sql<{ status: string | null }>`select pg_xact_status(${xid}::xid8) as status`.execute(db);
      const status = rows[0]?.status ?? null;
      if (status === 'committed') return true;
      if (status === 'aborted') return false;
      if (status === null) return undefined; // too old to be known (never, seconds after it ran)
    } catch (error) {
      if (!isConnectionLost(error)) throw error;
    }
    await sleep(wait);
  }
  return undefined;
}
