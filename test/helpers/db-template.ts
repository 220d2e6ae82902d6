import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream } from 'node:stream/web';
import { Kysely } from 'kysely';
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { extract } from 'tar';
import { openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';

/**
 * The migrated database a test run clones for each test file, made once by test/global-setup.ts. Migrating is
 * cheap; creating a database is not (PGlite runs initdb in WebAssembly, about 1.5 s of CPU per file), so:
 * - PostgreSQL: a database migrated once, then `create database … template` per file (the template must have no
 *   open connection while it is copied, so nothing here keeps one);
 * - PGlite: a migrated in-memory instance dumped once and unpacked into a data directory, which each database copies
 *   (~0.1 s) and opens on disk (~0.4 s): loading the dump into an in-memory instance (`loadDataDir`) took 1–2 s
 *   each, every file through PGlite's WebAssembly file system. Kept in memory (/dev/shm) where the system has it.
 * `ref` is the template database name (PostgreSQL) or the data directory (PGlite); PGlite's copies are made in the
 * directory above it (`pgliteCopiesDir`), which `remove()` deletes with whatever a crashed worker left there.
 */
export interface DatabaseTemplate {
  readonly ref: string;
  remove(): Promise<void>;
}

export async function prepareTemplate(): Promise<DatabaseTemplate> {
  const url = process.env.TEST_DATABASE_URL || undefined;
  return url ? postgresTemplate(url) : pgliteTemplate();
}

async function postgresTemplate(url: string): Promise<DatabaseTemplate> {
  const name = `lagoon_template_${randomBytes(6).toString('hex')}`;
  await adminQuery(url, `create database ${name}`);
  const handle = await openDatabase({ url: withDatabase(url, name), poolSize: 1 });
  try {
    await migrateToLatest(handle.db);
  } finally {
    await handle.close();
  }
  return { ref: name, remove: () => adminQuery(url, `drop database if exists ${name} with (force)`) };
}

async function pgliteTemplate(): Promise<DatabaseTemplate> {
  const [{ PGlite }, { PGliteDialect }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('kysely-pglite-dialect'),
  ]);
  const pglite = await PGlite.create('memory://');
  const db = new Kysely<unknown>({ dialect: new PGliteDialect(pglite) });
  const dir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'lagoon-test-databases-'));
  const dataDir = join(dir, 'template');
  try {
    await unpackDump(pglite, emptyPgliteTemplate(dataDir));
    await migrateToLatest(db);
    await unpackDump(pglite, dataDir);
  } finally {
    await db.destroy();
  }
  return { ref: dataDir, remove: async () => rmSync(dir, { recursive: true, force: true }) };
}

async function unpackDump(pglite: PGlite, dataDir: string): Promise<void> {
  const dump = await pglite.dumpDataDir('none');
  mkdirSync(dataDir);
  await pipeline(Readable.fromWeb(dump.stream() as ReadableStream<Uint8Array>), extract({ cwd: dataDir }));
}

/** Beside the migrated template: the same database before its first migration (for tests of what migrating does). */
export const emptyPgliteTemplate = (templateDir: string): string => join(dirname(templateDir), 'empty');

/** Where a PGlite test database copies the template to (removed with the template at the end of the run). */
export const pgliteCopiesDir = (templateDir: string): string => dirname(templateDir);

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
