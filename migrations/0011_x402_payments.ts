import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/*
 * x402 top-ups (src/wallets/top-up.service.ts): one row per EIP-3009 authorization, unique per token and
 * authorization nonce, so a signed transfer is settled and credited at most once. The row is written `pending`
 * before settlement; its `settled` transition, the balance change and the TOP_UP ledger entry commit together.
 * `tx_hash` is written as soon as the transfer is submitted, so a restart can finish a crash in between.
 */
const UP = [
  `
    create table x402_payments (
      id uuid primary key default gen_random_uuid(),
      asset text not null,
      nonce text not null,
      payer text not null,
      account_id uuid not null references accounts (id) on delete cascade,
      amount_units int8 not null check (amount_units > 0),
      amount_nano int8 not null check (amount_nano > 0),
      valid_before timestamptz not null,
      status text not null default 'pending' check (status in ('pending', 'settled', 'failed')),
      tx_hash text,
      failure_reason text,
      ledger_entry_id uuid,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (asset, nonce)
    )`,
  `create index x402_payments_pending on x402_payments (created_at) where status = 'pending'`,
];

const DOWN = [`drop table if exists x402_payments`];

// PGlite runs each statement as a prepared statement, which may hold one command only.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const statement of DOWN) await sql.raw(statement).execute(db);
}
