import type { Kysely } from 'kysely';
import { sql } from 'kysely';

const STATEMENTS = [
  `
    create table accounts (
      id uuid primary key default gen_random_uuid(),
      name text not null,
      kind text not null default 'standard' check (kind in ('standard', 'wallet')),
      wallet_address text unique,
      created_at timestamptz not null default now()
    )`,
  `
    create table balances (
      account_id uuid not null references accounts (id) on delete cascade,
      currency text not null check (currency in ('USD', 'DIEM', 'VCU', 'BUNDLED_CREDITS')),
      amount int8 not null default 0,
      reserved int8 not null default 0,
      updated_at timestamptz not null default now(),
      primary key (account_id, currency),
      constraint balance_reserved_non_negative check (reserved >= 0),
      constraint balance_covers_reservations check (amount >= reserved)
    )`,
  `
    create table account_ledger (
      id uuid primary key default gen_random_uuid(),
      account_id uuid not null references accounts (id) on delete cascade,
      currency text not null,
      amount int8 not null,
      balance_after int8 not null,
      type text not null check (type in ('TOP_UP', 'CHARGE', 'REFUND', 'ADJUSTMENT')),
      request_id text,
      model_id text,
      note text,
      created_at timestamptz not null default now()
    )`,
  `
    create index account_ledger_by_account on account_ledger (account_id, created_at desc)`,
  `
    create table api_keys (
      id uuid primary key default gen_random_uuid(),
      account_id uuid not null references accounts (id) on delete cascade,
      key_hash text not null unique,
      last6 text not null,
      api_key_type text not null check (api_key_type in ('ADMIN', 'INFERENCE')),
      description text not null,
      expires_at timestamptz,
      limit_usd int8,
      limit_diem int8,
      limit_vcu int8,
      limit_period text not null default 'EPOCH' check (limit_period in ('EPOCH', 'MONTH', 'LIFETIME')),
      model_privacy text not null default 'ALL' check (model_privacy in ('ALL', 'PRIVATE_TEXT', 'PRIVATE_ONLY')),
      created_at timestamptz not null default now(),
      last_used_at timestamptz,
      revoked_at timestamptz
    )`,
  `
    create index api_keys_active_by_account on api_keys (account_id, created_at) where revoked_at is null`,
  `
    create table api_key_spend (
      api_key_id uuid not null references api_keys (id) on delete cascade,
      period_start timestamptz not null,
      spent_usd int8 not null default 0,
      reserved_usd int8 not null default 0,
      spent_diem int8 not null default 0,
      reserved_diem int8 not null default 0,
      primary key (api_key_id, period_start),
      constraint key_spend_non_negative check (spent_usd >= 0 and reserved_usd >= 0 and spent_diem >= 0 and reserved_diem >= 0)
    )`,
  `
    create table reservations (
      id uuid primary key default gen_random_uuid(),
      account_id uuid not null references accounts (id) on delete cascade,
      api_key_id uuid references api_keys (id) on delete set null,
      currency text not null,
      amount int8 not null check (amount >= 0),
      key_period_start timestamptz,
      limit_group text check (limit_group in ('usd', 'diem')),
      status text not null default 'held' check (status in ('held', 'settled', 'released')),
      request_id text,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      finished_at timestamptz
    )`,
  `
    create index reservations_held_by_expiry on reservations (expires_at) where status = 'held'`,
  `
    create table usage_entries (
      id uuid primary key default gen_random_uuid(),
      account_id uuid not null references accounts (id) on delete cascade,
      api_key_id uuid references api_keys (id) on delete set null,
      reservation_id uuid references reservations (id) on delete set null,
      created_at timestamptz not null default now(),
      sku text not null,
      model_id text,
      model_type text,
      unit_type text,
      line_type text,
      price_per_unit_usd numeric not null,
      units numeric not null,
      amount int8 not null,
      currency text not null,
      notes text not null default '',
      request_id text,
      inference_details jsonb
    )`,
  `
    create index usage_entries_by_account_time on usage_entries (account_id, created_at desc)`,
  `
    create index usage_entries_by_key_time on usage_entries (api_key_id, created_at desc)`,
  `
    create table usage_daily (
      account_id uuid not null references accounts (id) on delete cascade,
      day date not null,
      api_key_id text not null default '',
      model_id text not null default '',
      model_type text not null default '',
      unit_type text not null default '',
      line_type text not null default '',
      currency text not null,
      amount int8 not null default 0,
      units numeric not null default 0,
      entries int4 not null default 0,
      primary key (account_id, day, api_key_id, model_id, line_type, currency, model_type, unit_type)
    )`,
  `
    create table models (
      id text primary key,
      type text not null,
      owned_by text not null,
      created_at timestamptz not null,
      privacy text not null,
      offline boolean not null default false,
      context_length int4,
      spec jsonb not null,
      providers jsonb not null,
      position int4 not null default 0,
      active boolean not null default true,
      updated_at timestamptz not null default now()
    )`,
  `
    create index models_by_type on models (type, position) where active`,
  `
    create table model_aliases (
      type text not null,
      name text not null,
      model_id text not null,
      primary key (type, name)
    )`,
  `
    create table characters (
      id uuid primary key default gen_random_uuid(),
      slug text not null unique,
      name text not null,
      description text not null default '',
      author text not null default '',
      adult boolean not null default false,
      featured boolean not null default false,
      tags jsonb not null default '[]',
      model_id text not null,
      web_enabled boolean not null default false,
      system_prompt text not null default '',
      photo_url text,
      share_url text,
      imports int4 not null default 0,
      rating_count int4 not null default 0,
      rating_sum int4 not null default 0,
      position int4 not null default 0,
      active boolean not null default true,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`,
  `
    create table instance_meta (
      key text primary key,
      value text not null,
      updated_at timestamptz not null default now()
    )`,
];

// Frozen in time: never edit once landed. Money columns are int8 nano-units (1e-9 USD or DIEM).
export async function up(db: Kysely<unknown>): Promise<void> {
  // PGlite runs each statement as a prepared statement, which may hold one command only.
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table if exists instance_meta, characters, model_aliases, models, usage_daily, usage_entries,
      reservations, api_key_spend, api_keys, account_ledger, balances, accounts cascade;
  `.execute(db);
}
