import type { Database } from '../db/database.ts';

export type RawTransactionOutcome = 'accepted' | 'rejected' | 'unanswered';

export interface RawTransactionLogEntry {
  readonly accountId: string;
  readonly apiKeyId: string | null;
  readonly network: string;
  readonly requestId: string;
  /** keccak256 of the signed transaction's bytes: its transaction hash. The payload itself is never stored. */
  readonly txHash: string;
  readonly outcome: RawTransactionOutcome;
}

export async function insertRawTransactions(db: Database, entries: readonly RawTransactionLogEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await db
    .insertInto('rpc_raw_transactions')
    .values(
      entries.map((e) => ({
        account_id: e.accountId,
        api_key_id: e.apiKeyId,
        network: e.network,
        request_id: e.requestId,
        tx_hash: e.txHash,
        outcome: e.outcome,
      })),
    )
    .execute();
}
