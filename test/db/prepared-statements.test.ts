import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { createTestDatabase, testDatabaseKind, type TestDatabase } from '../helpers/db.ts';

describe(`Statements tagged prepared: (${testDatabaseKind})`, () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });

  afterAll(async () => {
    await database.drop();
  });

  it('should answer a tagged statement like any other, every time, with its own parameters', async () => {
    await database.db.connection().execute(async (connection) => {
      for (const n of [1, 2, 3]) {
        const { rows } = await sql<{ next: number }>`/* prepared:test_probe */ select ${n}::int + 1 as next`.execute(
          connection,
        );
        expect(rows).toEqual([{ next: n + 1 }]);
      }
    });
  });

  // The embedded database prepares them too (src/db/pglite-prepared.ts): PGlite is PostgreSQL, with the same view.
  it('should prepare a tagged statement once per connection under its name, and leave other statements unnamed', async () => {
    await database.db.connection().execute(async (connection) => {
      await sql`/* prepared:test_once */ select ${1}::int as one`.execute(connection);
      await sql`/* prepared:test_once */ select ${2}::int as one`.execute(connection);
      await sql`select ${3}::int as untagged`.execute(connection);
      const { rows } = await sql<{
        name: string;
        statement: string;
      }>`select name, statement from pg_prepared_statements order by name`.execute(connection);
      expect(rows.filter((row) => row.name === 'lagoon_test_once')).toHaveLength(1);
      expect(rows.some((row) => row.statement.includes('untagged'))).toBe(false);
    });
  });

  it.skipIf(testDatabaseKind !== 'postgres')(
    'should send tagged statements unnamed when prepared statements are off (LAGOON_PG_PREPARED_STATEMENTS=false)',
    async () => {
      const plain = await openDatabase({ url: database.url, poolSize: 1, preparedStatements: false });
      try {
        await plain.db.connection().execute(async (connection) => {
          const { rows } = await sql<{ one: number }>`/* prepared:test_off */ select ${1}::int as one`.execute(
            connection,
          );
          expect(rows).toEqual([{ one: 1 }]);
          const prepared = await sql<{ name: string }>`select name from pg_prepared_statements`.execute(connection);
          expect(prepared.rows).toEqual([]);
        });
      } finally {
        await plain.close();
      }
    },
  );

  it('should fail a tagged statement with the database error and keep the connection usable', async () => {
    await database.db.connection().execute(async (connection) => {
      await expect(sql`/* prepared:test_fails */ select 1 / ${0}::int`.execute(connection)).rejects.toThrow(
        /division by zero/,
      );
      await expect(sql`/* prepared:test_fails */ select 1 / ${0}::int`.execute(connection)).rejects.toThrow(
        /division by zero/,
      );
      const { rows } = await sql<{ ok: number }>`/* prepared:test_after */ select ${5}::int as ok`.execute(connection);
      expect(rows).toEqual([{ ok: 5 }]);
    });
  });

  it('should pass every kind of parameter and give back every kind of value as an untagged statement does', async () => {
    const at = new Date('2026-11-26T10:00:00.123Z');
    const body = JSON.stringify({ rows: [{ id: 1, note: 'ü' }] });
    const read = (tagged: boolean) =>
      sql<
        Record<string, unknown>
      >`${sql.raw(tagged ? '/* prepared:test_kinds */ ' : '')}select ${2n ** 62n}::int8 as big,
        ${at}::timestamptz as at, ${body}::jsonb as body, ${null}::text as nothing, ${'2026-11-26'}::date as day,
        ${'1.250000000'}::numeric as decimal, ${true}::bool as yes`.execute(database.db);
    const untagged = await read(false);
    expect(untagged.rows).toEqual([
      expect.objectContaining({
        big: 2n ** 62n,
        at,
        body: JSON.parse(body),
        nothing: null,
        day: '2026-11-26',
        yes: true,
      }),
    ]);
    for (let round = 0; round < 2; round += 1) expect((await read(true)).rows).toEqual(untagged.rows);
  });

  it('should refuse a tagged statement that does not parse, every time, and then run the others', async () => {
    for (let round = 0; round < 2; round += 1)
      await expect(sql`/* prepared:test_broken */ selec ${1}::int`.execute(database.db)).rejects.toThrow(/syntax/);
    await database.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ ok: number }>`/* prepared:test_after_broken */ select ${7}::int as ok`.execute(trx);
      expect(rows).toEqual([{ ok: 7 }]);
    });
  });

  it('should report rows changed by a tagged statement without RETURNING', async () => {
    await sql`create table if not exists prepared_probe (id int primary key)`.execute(database.db);
    await sql`insert into prepared_probe values (1), (2), (3) on conflict do nothing`.execute(database.db);
    const result =
      await sql`/* prepared:test_update */ update prepared_probe set id = id + ${10}::int where id < ${3}::int`.execute(
        database.db,
      );
    expect(result.numAffectedRows).toBe(2n);
  });
});
