import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/*
 * The job sweeps (src/media/jobs/job-runner.ts) run every few seconds in every process: they read the jobs still
 * QUEUED or PROCESSING, and the recently FAILED ones, which small partial indexes find without reading the table.
 */
const UP = [
  `create index jobs_unfinished on jobs (id) where status in ('QUEUED', 'PROCESSING')`,
  `create index jobs_failed_by_finished on jobs (finished_at) where status = 'FAILED'`,
];

const DOWN = [`drop index if exists jobs_failed_by_finished`, `drop index if exists jobs_unfinished`];

// PGlite runs each statement as a prepared statement, which may hold one command only.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const statement of DOWN) await sql.raw(statement).execute(db);
}
