import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/*
 * A running attempt's heartbeat (src/media/jobs/queue-workers.ts writes it every half heartbeat): the queue's
 * supervisor (src/media/jobs/job-queue.ts) fails an attempt whose beat is late, so a killed worker's job is handed
 * out again within about two heartbeats rather than after the attempt's whole timeout.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table jobs add column heartbeat_at timestamptz`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table jobs drop column if exists heartbeat_at`.execute(db);
}
