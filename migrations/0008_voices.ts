import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/*
 * Cloned voices (POST /audio/voices): the reference sample a caller uploaded, usable as `vv_<id>` by that account
 * with that model only, until it expires (the model's `voice_cloning.retention_days`).
 */
const UP = [
  `
    create table voices (
      id text primary key,
      account_id uuid not null references accounts (id) on delete cascade,
      model_id text not null,
      sample bytea not null,
      sample_format text not null,
      sample_seconds real not null,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null
    )`,
  `create index voices_by_account_model on voices (account_id, model_id, created_at)`,
];

const DOWN = [`drop table if exists voices`];

// PGlite runs each statement as a prepared statement, which may hold one command only.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const statement of DOWN) await sql.raw(statement).execute(db);
}
