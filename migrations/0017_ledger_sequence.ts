import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/*
 * account_ledger.seq: the order entries were written in. Charges settled in one billing batch share their
 * created_at (to the millisecond), so time alone leaves their order, and the balanceAfter a reader follows,
 * arbitrary. An identity column numbers rows as they are inserted: a batch inserts its charges in settle order, and
 * an account's batches are serialised by its balance row lock. Rows already there are numbered by (created_at, id).
 */
const UP = [
  `alter table account_ledger add column seq int8`,
  `
    update account_ledger l set seq = o.n
    from (select id, row_number() over (order by created_at, id) as n from account_ledger) o
    where l.id = o.id`,
  `alter table account_ledger alter column seq set not null`,
  `alter table account_ledger alter column seq add generated always as identity`,
  `select setval(pg_get_serial_sequence('account_ledger', 'seq'), coalesce(max(seq), 0) + 1, false) from account_ledger`,
  `create index account_ledger_by_account_seq on account_ledger (account_id, seq desc)`,
];

const DOWN = [`drop index if exists account_ledger_by_account_seq`, `alter table account_ledger drop column seq`];

// PGlite runs each statement as a prepared statement, which may hold one command only.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const statement of DOWN) await sql.raw(statement).execute(db);
}
