import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely } from 'kysely';
import pg from 'pg';
import { openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';

/**
 * The migrated database a test run clones for each test file, made once by test/global-setup.ts. Migrating is
 * cheap; creating a database is not (PGlite runs initdb in WebAssembly, about 1.5 s of CPU per file), so:
 * - PostgreSQL: a database migrated once, then `create database … template` per file (the template must have no
 *   open connection while it is copied, so nothing here keeps one);
 * - PGlite: a migrated in-memory instance dumped once to an uncompressed tarball that each file loads
 *   (`loadDataDir`: ~0.4 s instead of ~1.6 s for initdb plus migrations; `clone()` is as fast but only within
 *   one process, and each test file runs in its own).
 * `ref` is the template database name (PostgreSQL) or the tarball path (PGlite).
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
  const dir = mkdtempSync(join(tmpdir(), 'lagoon-template-'));
  const file = join(dir, 'pgdata.tar');
  try {
    await migrateToLatest(db);
    const dump = await pglite.dumpDataDir('none');
    writeFileSync(file, new Uint8Array(await dump.arrayBuffer()));
  } finally {
    await db.destroy();
  }
  return { ref: file, remove: async () => rmSync(dir, { recursive: true, force: true }) };
}

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
