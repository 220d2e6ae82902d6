import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedConnectionOf } from '../../src/db/database.ts';
import { isRefusedByDatabase } from '../../src/db/errors.ts';
import { PgliteThread } from '../../src/db/pglite-thread.ts';
import { DatabaseUnavailableError } from '../../src/errors.ts';
import { createTestDatabase, pgliteDataDir, type TestDatabase } from '../helpers/db.ts';

// The embedded database runs in a thread of its own (src/db/pglite-thread.ts); what crosses to it must come back
// as the in-process driver gave it: values, errors, transactions, notifications.
describe('the embedded database thread', () => {
  let handle: TestDatabase;
  beforeAll(async () => {
    handle = await createTestDatabase();
    await sql`create table item (id int8 primary key, day date, body jsonb, bytes bytea, at timestamptz)`.execute(
      handle.db,
    );
  });
  afterAll(() => handle.drop());

  it('gives back int8 as bigint, dates as calendar strings, JSON, bytes and timestamps', async () => {
    const at = new Date('2026-11-26T10:00:00.123Z');
    await sql`insert into item values (${2n ** 62n}, '2026-11-26', ${JSON.stringify({ a: [1, 'b'] })}, ${new Uint8Array([0, 255])}, ${at})`.execute(
      handle.db,
    );
    const { rows } = await sql<{
      id: bigint;
      day: string;
      body: unknown;
      bytes: Uint8Array;
      at: Date;
    }>`select * from item`.execute(handle.db);
    expect(rows).toEqual([{ id: 2n ** 62n, day: '2026-11-26', body: { a: [1, 'b'] }, bytes: expect.anything(), at }]);
    expect([...rows[0]!.bytes]).toEqual([0, 255]);
    const updated = await handle.db
      .updateTable('item' as never)
      .set({ day: '2026-11-27' } as never)
      .executeTakeFirst();
    expect(updated.numUpdatedRows).toBe(1n);
  });

  it('answers a refused statement with its SQLSTATE and constraint, as a refusal', async () => {
    const error: unknown = await sql`insert into item (id) values (${2n ** 62n})`
      .execute(handle.db)
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: '23505', constraint: 'item_pkey' });
    expect(isRefusedByDatabase(error)).toBe(true);
  });

  it('runs one transaction at a time, and a rolled back one leaves nothing', async () => {
    const order: string[] = [];
    await Promise.all([
      handle.db.transaction().execute(async (trx) => {
        order.push('first begins');
        await sql`insert into item (id) values (1)`.execute(trx);
        await new Promise((resolve) => setTimeout(resolve, 20));
        order.push('first ends');
      }),
      handle.db.transaction().execute(async (trx) => {
        order.push('second begins');
        await sql`insert into item (id) values (2)`.execute(trx);
        order.push('second ends');
      }),
      handle.db
        .transaction()
        .execute(async (trx) => {
          await sql`insert into item (id) values (3)`.execute(trx);
          throw new Error('changed my mind');
        })
        .catch(() => undefined),
    ]);
    expect(order).toEqual(['first begins', 'first ends', 'second begins', 'second ends']);
    const { rows } = await sql<{ id: bigint }>`select id from item where id < 10 order by id`.execute(handle.db);
    expect(rows.map((row) => row.id)).toEqual([1n, 2n]);
  });

  it('delivers notifications to listeners until they unsubscribe', async () => {
    const connection = sharedConnectionOf(handle.db);
    if (connection?.kind !== 'pglite') throw new Error('expected the embedded database');
    const heard: string[] = [];
    const unsubscribe = await connection.pglite.listen('news', (payload) => heard.push(payload));
    await connection.pglite.query(`select pg_notify('news', 'one')`);
    await expect.poll(() => heard).toEqual(['one']);
    await unsubscribe();
    await connection.pglite.query(`select pg_notify('news', 'two')`);
    await connection.pglite.query('select 1');
    expect(heard).toEqual(['one']);
    const [first, second] = await connection.pglite.exec('select 1 as a; select 2 as b');
    expect([first?.rows, second?.rows]).toEqual([[{ a: 1 }], [{ b: 2 }]]);
  });

  it('refuses statements once closed, as an unavailable database', async () => {
    // A copy of the run's database (initdb in WebAssembly would take seconds), or outside a run a new one in memory.
    const closed = await PgliteThread.open({ dataDir: (await pgliteDataDir()) ?? 'memory://' });
    await closed.close();
    await expect(closed.query('select 1')).rejects.toBeInstanceOf(DatabaseUnavailableError);
  });

  it('says why a data directory could not be opened', async () => {
    await expect(PgliteThread.open({ dataDir: 'memory://', loadDataDir: new Uint8Array(10) })).rejects.toThrow();
  });
});
