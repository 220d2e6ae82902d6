import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { compilePgliteEngine, PgliteThread, type PgliteEngine } from '../../src/db/pglite-thread.ts';
import { PGLITE_WORKER } from './built-runtime-files.ts';
import { PglitePool } from './pglite-pool.ts';
import { adminQuery, copyPgliteTemplate, withDatabase } from './db-template.ts';

/** The real PostgreSQL to test against, when set (CI sets it); otherwise tests use in-memory PGlite. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;

export const testDatabaseKind = TEST_DATABASE_URL ? 'postgres' : 'pglite';

/**
 * A fresh, migrated database for one test file: a new PGlite data directory, or a new database created on the
 * server named by TEST_DATABASE_URL (dropped again by `drop()`). Both are copies of the template that
 * test/global-setup.ts migrated once for the run; without one (a helper run outside vitest's setup) a PGlite in
 * memory, migrated here.
 */
export type TestDatabase = DatabaseHandle & { url: string | undefined; drop(): Promise<void> };

/** `empty`: a database with no tables at all, for tests of what a first start or a migration does. */
export async function createTestDatabase(options: { empty?: boolean } = {}): Promise<TestDatabase> {
  const runTemplate = templateRef();
  if (!TEST_DATABASE_URL) return createPgliteDatabase(runTemplate, options);
  const template = options.empty ? undefined : runTemplate;
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

/**
 * A copy of the run's template data directory (~0.1 s), opened on disk in the build's thread module (compiled, it
 * starts ~0.3 s sooner than the sources through tsx); outside a run, or `empty`, a PGlite in memory (initdb, ~2 s),
 * migrated unless `empty`.
 */
async function createPgliteDatabase(
  runTemplate: string | undefined,
  options: { empty?: boolean },
): Promise<TestDatabase> {
  if (runTemplate === undefined || options.empty) {
    const handle = await openDatabase({ dataDir: 'memory://' });
    if (!options.empty) await migrateToLatest(handle.db);
    return { ...handle, url: undefined, drop: () => handle.close() };
  }
  pool ??= new PglitePool(async () => {
    const dataDir = await copyPgliteTemplate(runTemplate);
    const { threadModule, engine } = await embeddedThreadOptions();
    return { dataDir, thread: await PgliteThread.open({ dataDir, engine }, threadModule) };
  });
  const { handle, giveBack } = await pool.take();
  return { ...handle, url: undefined, drop: giveBack };
}

/** This worker's migrated embedded databases, used again from file to file (test/helpers/pglite-pool.ts). */
let pool: PglitePool | undefined;

/**
 * A PGlite data directory copied from the run's template, for a test to open (and open again) as it pleases, or to
 * start a server process on; removed at the end of the run. Undefined outside a run.
 */
export async function pgliteDataDir(): Promise<string | undefined> {
  const runTemplate = templateRef();
  return runTemplate === undefined ? undefined : copyPgliteTemplate(runTemplate);
}

/** PGlite's engine compiled once per test worker: each database's thread then starts in half the CPU time. */
let compiledEngine: Promise<PgliteEngine> | undefined;

/** How a test opens an embedded database: the build's thread module and the engine this worker compiled once. */
export const embeddedThreadOptions = async () => ({
  threadModule: PGLITE_WORKER,
  engine: await (compiledEngine ??= compilePgliteEngine()),
});

function templateRef(): string | undefined {
  try {
    return inject('lagoonTemplate') || undefined;
  } catch {
    return undefined; // not inside a vitest worker
  }
}
