import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { inject } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { adminQuery, withDatabase } from './db-template.ts';

/** The real PostgreSQL to test against, when set (CI sets it); otherwise tests use in-memory PGlite. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;

export const testDatabaseKind = TEST_DATABASE_URL ? 'postgres' : 'pglite';

/**
 * A fresh, migrated database for one test file: a new PGlite in memory, or a new database created on the
 * server named by TEST_DATABASE_URL (dropped again by `drop()`). Both are copies of the template that
 * test/global-setup.ts migrated once for the run; without one (a helper run outside vitest's setup) it migrates.
 */
export type TestDatabase = DatabaseHandle & { url: string | undefined; drop(): Promise<void> };

/** `empty`: a database with no tables at all (PostgreSQL only), for tests of what a first start does. */
export async function createTestDatabase(options: { empty?: boolean } = {}): Promise<TestDatabase> {
  const runTemplate = templateRef();
  const template = options.empty ? undefined : runTemplate;
  if (!TEST_DATABASE_URL) {
    // Inside a run, test/global-setup.ts has just built the server: its compiled thread module starts ~0.3 s
    // sooner than the sources, which each new thread would otherwise compile through tsx.
    const threadModule = runTemplate === undefined ? undefined : BUILT_PGLITE_WORKER;
    const handle = template
      ? await openDatabase({ dataDir: 'memory://', loadDataDir: await pgliteDump(template), threadModule })
      : await openDatabase({ dataDir: 'memory://', threadModule });
    if (!template) await migrateToLatest(handle.db);
    return { ...handle, url: undefined, drop: () => handle.close() };
  }
  const name = `lagoon_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(
    TEST_DATABASE_URL,
    template ? `create database ${name} template ${template}` : `create database ${name}`,
  );
  const url = withDatabase(TEST_DATABASE_URL, name);
  const handle = await openDatabase({ url, poolSize: 20 });
  if (!template && !options.empty) await migrateToLatest(handle.db);
  return {
    ...handle,
    url,
    async drop() {
      await handle.close();
      await adminQuery(TEST_DATABASE_URL, `drop database if exists ${name} with (force)`);
    },
  };
}

/** The embedded database's thread module in the build (build.ts: entry `pglite-worker`). */
const BUILT_PGLITE_WORKER = { url: new URL('../../dist/pglite-worker.js', import.meta.url), typescript: false };

function templateRef(): string | undefined {
  try {
    return inject('lagoonTemplate') || undefined;
  } catch {
    return undefined; // not inside a vitest worker
  }
}

// Read once per test file (a worker process), shared by every database the file makes.
let dump: Promise<Blob> | undefined;
const pgliteDump = (file: string): Promise<Blob> => (dump ??= readFile(file).then((bytes) => new Blob([bytes])));
