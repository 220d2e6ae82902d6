import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/**
 * Migration files are named `<4-digit sequence>_<snake_case_name>`: the next one takes the next number, so a new
 * migration always sorts after every landed one (Kysely refuses to apply one that sorts before an applied one).
 */
export const MIGRATION_NAME = /^(\d{4})_[a-z0-9]+(?:_[a-z0-9]+)*$/;

/**
 * The names the first migrations carried when they were named by timestamp, as recorded in `kysely_migration` of
 * databases migrated then, and the names they have now. Frozen: migrations named by sequence never enter it.
 */
export const TIMESTAMP_NAMES: ReadonlyArray<readonly [old: string, current: string]> = [
  ['2026-11-22T08-00-00_core', '0001_core'],
  ['2026-11-24T09-00-00_usage_read_indexes', '0002_usage_read_indexes'],
  ['2026-11-25T12-30-00_crypto_rpc', '0003_crypto_rpc'],
  ['2026-11-26T09-00-00_reservation_leases', '0004_reservation_leases'],
  ['2026-11-27T10-15-00_balance_debt', '0005_balance_debt'],
  ['2026-11-28T09-00-00_usage_rollups_by_model_and_key', '0006_usage_rollups_by_model_and_key'],
  ['2026-11-29T09-00-00_media_objects', '0007_media_objects'],
  ['2026-11-29T11-00-00_voices', '0008_voices'],
  ['2026-11-30T09-00-00_jobs', '0009_jobs'],
  ['2026-11-30T12-00-00_siwx_nonces', '0010_siwx_nonces'],
  ['2026-11-30T13-00-00_x402_payments', '0011_x402_payments'],
  ['2026-12-01T08-00-00_character_reviews', '0012_character_reviews'],
  ['2026-12-01T08-30-00_web3_key_tokens', '0013_web3_key_tokens'],
  ['2026-12-01T09-00-00_media_storage', '0014_media_storage'],
  ['2026-12-01T09-30-00_rate_limits', '0015_rate_limits'],
  ['2026-12-01T12-00-00_responses', '0016_responses'],
  ['2026-12-02T08-00-00_ledger_sequence', '0017_ledger_sequence'],
  ['2026-12-03T08-00-00_x402_payer_nonce', '0018_x402_payer_nonce'],
  ['2026-12-03T09-00-00_jobs_sweep_indexes', '0019_jobs_sweep_indexes'],
  ['2026-12-03T10-00-00_job_heartbeat', '0020_job_heartbeat'],
];

/**
 * Renames the timestamp names a database recorded to the sequence names, before Kysely compares the applied
 * migrations with the files. One transaction, and a no-op once done (or on a new database), so every start may
 * run it and two starting at once both end with the same rows.
 */
export async function renameTimestampMigrations<T>(db: Kysely<T>): Promise<number> {
  return db.transaction().execute(async (trx) => {
    if (!(await migrationTablePresent(trx))) return 0;
    const pairs = sql.join(TIMESTAMP_NAMES.map(([old, current]) => sql`(${old}, ${current})`));
    const result = await sql`update kysely_migration set name = renamed.current
      from (values ${pairs}) as renamed(old, current) where kysely_migration.name = renamed.old`.execute(trx);
    return Number(result.numAffectedRows ?? 0n);
  });
}

/** Whether Kysely's table of applied migrations exists (not on a new database). */
export async function migrationTablePresent<T>(db: Kysely<T>): Promise<boolean> {
  const { rows } = await sql<{
    present: boolean;
  }>`select to_regclass('kysely_migration') is not null as present`.execute(db);
  return rows[0]?.present === true;
}
