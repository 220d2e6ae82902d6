import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/*
 * Balance leases (src/billing/lease-manager.ts): a lease is a held reservation taken by one server process, which
 * draws its calls' holds from it in memory and charges their settlements against it in batches. `lease_holder`
 * names the process (null for a call's own reservation), so that a process refused for lack of funds can see that
 * others hold some of the account's balance and ask them to give back what they do not use.
 */
const UP = [
  `alter table reservations add column lease_holder text`,
  `create index reservations_held_leases on reservations (account_id) where status = 'held' and lease_holder is not null`,
];

const DOWN = [
  `drop index if exists reservations_held_leases`,
  `alter table reservations drop column if exists lease_holder`,
];

// PGlite runs each statement as a prepared statement, which may hold one command only.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const statement of DOWN) await sql.raw(statement).execute(db);
}
