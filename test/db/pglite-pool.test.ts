import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { sharedConnectionOf } from '../../src/db/database.ts';
import { createTestDatabase, TEST_DATABASE_URL } from '../helpers/db.ts';

/*
 * The tests' embedded databases are used again from file to file (test/helpers/pglite-pool.ts): a database given
 * back must be as the template left it for the next file, and one a test changed in a way the reset does not undo
 * must not be given out again.
 */
const threadOf = (database: Awaited<ReturnType<typeof createTestDatabase>>) => {
  const connection = sharedConnectionOf(database.db);
  return connection?.kind === 'pglite' ? connection.pglite : undefined;
};

describe.skipIf(TEST_DATABASE_URL)('the pool of embedded test databases', () => {
  it('gives a database back emptied, with its session reset, and gives it out again', async () => {
    const first = await createTestDatabase();
    await sql`insert into accounts (id, name) values (gen_random_uuid(), 'left behind')`.execute(first.db);
    await sql`create schema pgboss_like`.execute(first.db);
    await sql`set statement_timeout = 1234`.execute(first.db);
    const thread = threadOf(first);
    await first.drop();
    await expect(first.db.selectFrom('accounts').selectAll().execute()).rejects.toThrow();

    const second = await createTestDatabase();
    try {
      expect(threadOf(second)).toBe(thread);
      expect(await second.db.selectFrom('accounts').selectAll().execute()).toEqual([]);
      const { rows } = await sql<{ name: string }>`select nspname as name from pg_namespace
        where nspname = 'pgboss_like'`.execute(second.db);
      expect(rows).toEqual([]);
      const setting = await sql<{ statement_timeout: string }>`show statement_timeout`.execute(second.db);
      expect(setting.rows[0]?.statement_timeout).toBe('0');
    } finally {
      await second.drop();
    }
  });

  it('does not give out again a database whose schema a test changed', async () => {
    const first = await createTestDatabase();
    await sql`alter table accounts add column left_behind integer`.execute(first.db);
    const thread = threadOf(first);
    await first.drop();
    expect(thread?.closed).toBe(true);

    const second = await createTestDatabase();
    try {
      expect(threadOf(second)).not.toBe(thread);
      const { rows } = await sql<{ name: string }>`select column_name as name from information_schema.columns
        where table_name = 'accounts' and column_name = 'left_behind'`.execute(second.db);
      expect(rows).toEqual([]);
    } finally {
      await second.drop();
    }
  });
});
