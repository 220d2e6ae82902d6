import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';

/** The real PostgreSQL to test against, when set (CI sets it); otherwise tests use in-memory PGlite. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;

export const testDatabaseKind = TEST_DATABASE_URL ? 'postgres' : 'pglite';

/**
 * A fresh, migrated database for one test file: a new PGlite in memory, or a new database created on the
 * server named by TEST_DATABASE_URL (dropped again by `drop()`).
 */
export type TestDatabase = DatabaseHandle & { url: string | undefined; drop(): Promise<void> };

export async function createTestDatabase(): Promise<TestDatabase> {
  if (!TEST_DATABASE_URL) {
    const handle = await openDatabase({ dataDir: 'memory://' });
    await migrateToLatest(handle.db);
    return { ...handle, url: undefined, drop: () => handle.close() };
  }
  const name = `lagoon_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`create database ${name}`);
  const url = withDatabase(TEST_DATABASE_URL, name);
  const handle = await openDatabase({ url, poolSize: 20 });
  await migrateToLatest(handle.db);
  return {
    ...handle,
    url,
    async drop() {
      await handle.close();
      await adminQuery(`drop database if exists ${name} with (force)`);
    },
  };
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
