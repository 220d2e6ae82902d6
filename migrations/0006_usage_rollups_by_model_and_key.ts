import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/*
 * Coarser usage rollups for the analytics reads (src/billing/analytics.repository.ts): usage_daily keeps a row per
 * day × key × model × line type, so a 90-day window of an account with many keys and models is tens of thousands of
 * rows to aggregate. usage_daily_model drops the key, usage_daily_key drops the model; each query reads the smaller
 * one it needs. They are written in the same statement or transaction as usage_daily and the usage entries, and
 * filled here from usage_daily.
 */
const UP = [
  `
    create table usage_daily_model (
      account_id uuid not null references accounts (id) on delete cascade,
      day date not null,
      model_id text not null default '',
      model_type text not null default '',
      unit_type text not null default '',
      line_type text not null default '',
      currency text not null,
      amount int8 not null default 0,
      units numeric not null default 0,
      entries int4 not null default 0,
      primary key (account_id, day, model_id, line_type, currency, model_type, unit_type)
    )`,
  `
    create table usage_daily_key (
      account_id uuid not null references accounts (id) on delete cascade,
      day date not null,
      api_key_id text not null default '',
      unit_type text not null default '',
      line_type text not null default '',
      currency text not null,
      amount int8 not null default 0,
      units numeric not null default 0,
      entries int4 not null default 0,
      primary key (account_id, day, api_key_id, line_type, currency, unit_type)
    )`,
  `
    insert into usage_daily_model (account_id, day, model_id, model_type, unit_type, line_type, currency, amount, units, entries)
    select account_id, day, model_id, model_type, unit_type, line_type, currency, sum(amount), sum(units), sum(entries)
    from usage_daily group by account_id, day, model_id, model_type, unit_type, line_type, currency`,
  `
    insert into usage_daily_key (account_id, day, api_key_id, unit_type, line_type, currency, amount, units, entries)
    select account_id, day, api_key_id, unit_type, line_type, currency, sum(amount), sum(units), sum(entries)
    from usage_daily group by account_id, day, api_key_id, unit_type, line_type, currency`,
];

// PGlite runs each statement as a prepared statement, which may hold one command only.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists usage_daily_key`.execute(db);
  await sql`drop table if exists usage_daily_model`.execute(db);
}
