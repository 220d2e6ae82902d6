import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/*
 * Queued music/audio and video jobs (src/media/jobs/). This table is the source of truth the API answers from;
 * pg-boss (its own schema) only drives the work. `reservation` is the hold taken at queue time, kept so any worker
 * process can settle or release it; a job settles only on its PROCESSING → COMPLETED transition.
 */
const UP = [
  `
    create table jobs (
      id uuid primary key,
      account_id uuid not null references accounts (id) on delete cascade,
      api_key_id uuid,
      kind text not null check (kind in ('audio', 'video')),
      model_id text not null,
      status text not null default 'QUEUED' check (status in ('QUEUED', 'PROCESSING', 'COMPLETED', 'FAILED')),
      progress int4 not null default 0,
      request jsonb not null,
      quote_usd int8 not null,
      reservation_id uuid,
      reservation jsonb,
      provider_id text not null,
      provider_job_id text,
      media_object_id uuid,
      content_type text,
      error text,
      created_at timestamptz not null default now(),
      started_at timestamptz,
      finished_at timestamptz,
      attempts int4 not null default 0,
      deleted_at timestamptz
    )`,
  `create index jobs_by_account on jobs (account_id, created_at desc)`,
  `create index jobs_by_model_finished on jobs (model_id, finished_at desc) where status = 'COMPLETED'`,
];

const DOWN = [`drop table if exists jobs`];

// PGlite runs each statement as a prepared statement, which may hold one command only.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const statement of DOWN) await sql.raw(statement).execute(db);
}
