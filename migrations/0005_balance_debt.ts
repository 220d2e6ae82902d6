import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/*
 * Debt (src/billing/batch-writer.ts, chargeAsDebt in billing.repository.ts): a settlement whose hold was gone and
 * whose balance no longer covers it is still charged, and may take the balance below what is held, or below zero.
 * Only that path sets `debt_since`, and only a row with it set may hold less than its reservations; a top-up that
 * covers them again clears it. Every other writer keeps amount >= reserved as before.
 */
const UP = [
  `alter table balances add column debt_since timestamptz`,
  `alter table balances drop constraint balance_covers_reservations`,
  `alter table balances add constraint balance_covers_reservations check (amount >= reserved or debt_since is not null)`,
];

const DOWN = [
  `alter table balances drop constraint balance_covers_reservations`,
  `alter table balances add constraint balance_covers_reservations check (amount >= reserved)`,
  `alter table balances drop column if exists debt_since`,
];

// PGlite runs each statement as a prepared statement, which may hold one command only.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const statement of DOWN) await sql.raw(statement).execute(db);
}
