import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/*
 * Wallet sign-in nonces seen (src/wallets/siwx-nonces.ts): each nonce belongs to the one signed message first seen
 * with it until that message expires, in every process; a different message with the same nonce is refused.
 */
const UP = [
  `
    create table siwx_nonces (
      nonce text primary key,
      message_hash text not null,
      expires_at timestamptz not null
    )`,
  `create index siwx_nonces_by_expiry on siwx_nonces (expires_at)`,
];

const DOWN = [`drop table if exists siwx_nonces`];

// PGlite runs each statement as a prepared statement, which may hold one command only.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const statement of DOWN) await sql.raw(statement).execute(db);
}
