import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/*
 * Per-key rate limits (src/rate-limits): a key's own override of the operator's limits ({rpm?, rpd?, tpm?}, null:
 * none), and the log of refused calls (GET /api_keys/rate_limits/log), pruned to the newest rows per account.
 */
const UP = [
  `alter table api_keys add column rate_limits jsonb`,
  `
    create table rate_limit_breaches (
      id bigserial primary key,
      account_id uuid not null references accounts (id) on delete cascade,
      api_key_id uuid references api_keys (id) on delete set null,
      model_id text not null,
      tier text not null,
      limit_type text not null check (limit_type in ('RPM', 'RPD', 'TPM')),
      created_at timestamptz not null default now()
    )`,
  `create index rate_limit_breaches_by_account on rate_limit_breaches (account_id, id desc)`,
];

const DOWN = [`drop table if exists rate_limit_breaches`, `alter table api_keys drop column if exists rate_limits`];

// PGlite runs each statement as a prepared statement, which may hold one command only.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const statement of DOWN) await sql.raw(statement).execute(db);
}
