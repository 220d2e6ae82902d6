import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/*
 * Media handed out by signed URLs (src/media/): generated images and speech now, queued job results later. The
 * bytes live in the row; `storage external` keeps them uncompressed (images and audio are compressed already), so
 * a range read fetches only the pages it needs. Rows past expires_at are deleted by the media sweeper.
 */
const UP = [
  `
    create table media_objects (
      id uuid primary key,
      account_id uuid not null references accounts (id) on delete cascade,
      content_type text not null,
      bytes bytea not null,
      byte_size int8 not null,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null
    )`,
  `alter table media_objects alter column bytes set storage external`,
  `create index media_objects_by_expiry on media_objects (expires_at)`,
];

// PGlite runs each statement as a prepared statement, which may hold one command only.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists media_objects`.execute(db);
}
