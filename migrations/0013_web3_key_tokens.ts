import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/*
 * Tokens of GET /api_keys/generate_web3_key that a wallet signed and spent on a key: each token creates one key at
 * most. Rows are kept until the token would have expired anyway.
 */
const UP = [
  `
    create table web3_key_tokens (
      token_id text primary key,
      wallet_address text not null,
      used_at timestamptz not null default now(),
      expires_at timestamptz not null
    )`,
  `create index web3_key_tokens_by_expiry on web3_key_tokens (expires_at)`,
];

const DOWN = [`drop table if exists web3_key_tokens`];

// PGlite runs each statement as a prepared statement, which may hold one command only.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const statement of DOWN) await sql.raw(statement).execute(db);
}
