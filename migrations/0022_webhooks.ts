import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/*
 * Account webhooks (src/webhooks/): the endpoints an account registers, one delivery per event and endpoint (or per
 * job's own webhook_url), each attempt at it, the account's balance-low threshold, and which spend-limit levels a key
 * has crossed in a period (so each crossing is told once per period).
 */
const UP = [
  `create table webhook_endpoints (
    id uuid primary key default gen_random_uuid(),
    account_id uuid not null references accounts (id) on delete cascade,
    url text not null,
    description text not null default '',
    events text not null,
    secret text not null,
    enabled boolean not null default true,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
  )`,
  `create index webhook_endpoints_account on webhook_endpoints (account_id, created_at)`,
  `create table webhook_deliveries (
    id uuid primary key default gen_random_uuid(),
    event_id text not null,
    account_id uuid not null references accounts (id) on delete cascade,
    endpoint_id uuid references webhook_endpoints (id) on delete cascade,
    url text not null,
    event_type text not null,
    payload text not null,
    status text not null default 'PENDING',
    attempts integer not null default 0,
    last_status_code integer,
    last_error text,
    created_at timestamptz not null default now(),
    last_attempt_at timestamptz,
    delivered_at timestamptz
  )`,
  `create unique index webhook_deliveries_event_target on webhook_deliveries (event_id, url, coalesce(endpoint_id, '00000000-0000-0000-0000-000000000000'::uuid))`,
  `create index webhook_deliveries_account on webhook_deliveries (account_id, created_at desc)`,
  `create table webhook_attempts (
    id bigserial primary key,
    delivery_id uuid not null references webhook_deliveries (id) on delete cascade,
    attempt integer not null,
    status_code integer,
    error text,
    duration_ms integer not null,
    created_at timestamptz not null default now()
  )`,
  `create index webhook_attempts_delivery on webhook_attempts (delivery_id, attempt)`,
  `create table webhook_settings (
    account_id uuid primary key references accounts (id) on delete cascade,
    balance_low_threshold bigint,
    balance_low_armed boolean not null default true,
    updated_at timestamptz not null default now()
  )`,
  `create table webhook_key_alerts (
    api_key_id uuid not null references api_keys (id) on delete cascade,
    period_start timestamptz not null,
    level smallint not null,
    created_at timestamptz not null default now(),
    primary key (api_key_id, period_start, level)
  )`,
  `alter table jobs add column webhook_url text`,
];

const DOWN = [
  `alter table jobs drop column if exists webhook_url`,
  `drop table if exists webhook_key_alerts`,
  `drop table if exists webhook_settings`,
  `drop table if exists webhook_attempts`,
  `drop table if exists webhook_deliveries`,
  `drop table if exists webhook_endpoints`,
];

// PGlite runs each statement as a prepared statement, which may hold one command only.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const statement of DOWN) await sql.raw(statement).execute(db);
}
