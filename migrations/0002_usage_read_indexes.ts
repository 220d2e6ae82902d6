import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/*
 * Indexes for the billing read side (usage export, CSV streaming, key usage):
 * - usage_entries (account_id, created_at, id) INCLUDE (currency) replaces (account_id, created_at desc): the
 *   export orders by (created_at, id) in both directions, pages by keyset on that pair, and filters on currency
 *   inside the index (index-only counts and seeks).
 * - usage_daily (api_key_id, day): per-key trailing usage reads the rollups by key, not by account.
 */
const UP = [
  `create index usage_entries_by_account_created_id on usage_entries (account_id, created_at, id) include (currency)`,
  `drop index if exists usage_entries_by_account_time`,
  `create index usage_daily_by_key_day on usage_daily (api_key_id, day) where api_key_id <> ''`,
];

const DOWN = [
  `drop index if exists usage_daily_by_key_day`,
  `create index if not exists usage_entries_by_account_time on usage_entries (account_id, created_at desc)`,
  `drop index if exists usage_entries_by_account_created_id`,
];

// PGlite runs each statement as a prepared statement, which may hold one command only.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const statement of DOWN) await sql.raw(statement).execute(db);
}
