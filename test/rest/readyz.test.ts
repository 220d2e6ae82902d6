import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { testDatabaseKind } from '../helpers/db.ts';

describe(`GET /readyz reflects the database (${testDatabaseKind})`, () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });

  afterAll(async () => {
    await t.close();
  });

  const readiness = async () => {
    const response = await t.call('/readyz', { key: null });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it('should answer 200 with the schema in place', async () => {
    expect(await readiness()).toEqual({ status: 200, body: { status: 'ready', database: testDatabaseKind } });
  });

  it('should answer 503 when a core table is missing', async () => {
    const db = t.app.database.db;
    await sql`alter table usage_entries rename to usage_entries_away`.execute(db);
    try {
      expect(await readiness()).toEqual({
        status: 503,
        body: { status: 'unavailable', database: testDatabaseKind, reason: 'schema missing' },
      });
    } finally {
      await sql`alter table usage_entries_away rename to usage_entries`.execute(db);
    }
    expect((await readiness()).status).toBe(200);
  });

  it("should answer 503 when the migrations table is missing or lacks this build's newest migration", async () => {
    const db = t.app.database.db;
    const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name desc limit 1`.execute(
      db,
    );
    const newest = rows[0]!.name;
    await sql`delete from kysely_migration where name = ${newest}`.execute(db);
    expect((await readiness()).body).toMatchObject({ reason: 'schema missing' });
    await sql`insert into kysely_migration (name, timestamp) values (${newest}, ${new Date().toISOString()})`.execute(
      db,
    );
    await sql`alter table kysely_migration rename to kysely_migration_away`.execute(db);
    try {
      expect(await readiness()).toMatchObject({ status: 503, body: { reason: 'schema missing' } });
    } finally {
      await sql`alter table kysely_migration_away rename to kysely_migration`.execute(db);
    }
    expect((await readiness()).status).toBe(200);
  });

  it('should answer 503 when the database cannot be reached', async () => {
    await t.app.database.close();
    const { status, body } = await readiness();
    expect(status).toBe(503);
    expect(body).toEqual({ status: 'unavailable', database: testDatabaseKind, reason: 'database unreachable' });
  });
});
