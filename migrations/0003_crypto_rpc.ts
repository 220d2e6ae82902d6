import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/*
 * The crypto JSON-RPC proxy:
 * - accounts.rpc_tier: the caps tier (standard or staff; docs/api.md), set by the operator CLI.
 * - rpc_idempotency: responses kept 24 h per (account, Idempotency-Key), shared by every API process; a
 *   'pending' row is the claim of the request that is reaching the node (its expires_at is a short lease).
 * - rpc_raw_transactions: one row per eth_sendRawTransaction (keccak256 of the raw bytes, never the payload).
 */
const UP = [
  `alter table accounts add column rpc_tier text not null default 'standard' check (rpc_tier in ('standard', 'staff'))`,
  `
    create table rpc_idempotency (
      account_id uuid not null references accounts (id) on delete cascade,
      idempotency_key text not null,
      request_hash text not null,
      network text not null,
      state text not null check (state in ('pending', 'done')),
      status int4,
      response_body text,
      credits int4,
      cost_nano int8,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      primary key (account_id, idempotency_key)
    )`,
  `create index rpc_idempotency_by_expiry on rpc_idempotency (expires_at)`,
  `
    create table rpc_raw_transactions (
      id uuid primary key default gen_random_uuid(),
      account_id uuid not null references accounts (id) on delete cascade,
      api_key_id uuid,
      network text not null,
      request_id text not null,
      tx_hash text not null,
      outcome text not null check (outcome in ('accepted', 'rejected', 'unanswered')),
      created_at timestamptz not null default now()
    )`,
  `create index rpc_raw_transactions_by_hash on rpc_raw_transactions (tx_hash)`,
  `create index rpc_raw_transactions_by_account on rpc_raw_transactions (account_id, created_at)`,
];

const DOWN = [
  `drop table if exists rpc_raw_transactions`,
  `drop table if exists rpc_idempotency`,
  `alter table accounts drop column if exists rpc_tier`,
];

// PGlite runs each statement as a prepared statement, which may hold one command only.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const statement of DOWN) await sql.raw(statement).execute(db);
}
