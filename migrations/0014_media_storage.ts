import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/*
 * Media bytes move out of the database (src/media/storage/): a row of media_objects now names the store that holds
 * its bytes (`local` directory, `s3` bucket), and keeps them itself only as `database` (every row written before).
 * A job of a download-URL model gets its media id and the URL's expiry at queue time (`download_expires_at`), so
 * the URL is answered before the media exists. The index serves the retention sweep of completed jobs' media.
 */
const UP = [
  `alter table media_objects alter column bytes drop not null`,
  `alter table media_objects add column storage text not null default 'database'
     check (storage in ('database', 'local', 's3'))`,
  `alter table jobs add column download_expires_at timestamptz`,
  `create index jobs_kept_media_by_finish on jobs (finished_at)
     where status = 'COMPLETED' and deleted_at is null and media_object_id is not null`,
];

const DOWN = [
  `drop index if exists jobs_kept_media_by_finish`,
  `alter table jobs drop column if exists download_expires_at`,
  `delete from media_objects where bytes is null`,
  `alter table media_objects drop column if exists storage`,
  `alter table media_objects alter column bytes set not null`,
];

// PGlite runs each statement as a prepared statement, which may hold one command only.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const statement of DOWN) await sql.raw(statement).execute(db);
}
