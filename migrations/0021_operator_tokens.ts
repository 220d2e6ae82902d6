import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/*
 * Operator tokens: the credential of the GraphQL operator operations (src/operator/). Made, listed and revoked with
 * the CLI; stored as the SHA-256 of the secret, like API keys. account_ledger.operator_token_id names the token
 * that credited or debited an account through GraphQL (null: the CLI, a charge or a top-up).
 */
const UP = [
  `create table operator_tokens (
    id uuid primary key default gen_random_uuid(),
    name text not null,
    token_hash text not null unique,
    last6 text not null,
    created_at timestamptz not null default now(),
    last_used_at timestamptz,
    revoked_at timestamptz
  )`,
  `alter table account_ledger add column operator_token_id uuid references operator_tokens (id)`,
];

const DOWN = [
  `alter table account_ledger drop column if exists operator_token_id`,
  `drop table if exists operator_tokens`,
];

// PGlite runs each statement as a prepared statement, which may hold one command only.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const statement of DOWN) await sql.raw(statement).execute(db);
}
