import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { openDatabase } from '../../src/db/database.ts';
import {
  embeddedTemplateFile,
  extractEmbeddedTemplate,
  migrationNames,
  readManifest,
} from '../../src/db/embedded-template-read.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { MIGRATIONS_DIR } from '../../src/runtime-files.ts';

/**
 * The migrated database a test run clones for each test file, made once by test/global-setup.ts. Migrating is
 * cheap; creating a database is not (PGlite runs initdb in WebAssembly: about 4 s, 1.5 s of CPU per file), so:
 * - PostgreSQL: a database migrated once, then `create database … template` per file (the template must have no
 *   open connection while it is copied, so nothing here keeps one);
 * - PGlite: the build's migrated template (the one a first `npm start` unpacks) unpacked into a data directory,
 *   which each database copies (~0.1 s) and opens on disk (~0.4 s); loading a dump into an in-memory instance
 *   (`loadDataDir`) took 1–2 s each, every file through PGlite's WebAssembly file system. Kept in memory (/dev/shm)
 *   where the system has it.
 * `ref` is the template database name (PostgreSQL) or the data directory (PGlite); PGlite's copies are made in the
 * directory above it (`copyPgliteTemplate`), which `remove()` deletes with whatever a crashed worker left there.
 */
export interface DatabaseTemplate {
  readonly kind: 'postgres' | 'pglite';
  readonly ref: string;
  remove(): Promise<void>;
}

/** `built`: the server's build, which PGlite's template comes from (PostgreSQL's is migrated meanwhile). */
export async function prepareTemplate(built: Promise<unknown>): Promise<DatabaseTemplate> {
  const url = process.env.TEST_DATABASE_URL || undefined;
  if (url) return postgresTemplate(url);
  await built;
  return pgliteTemplate();
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
  return {
    kind: 'postgres',
    ref: name,
    remove: () => adminQuery(url, `drop database if exists ${name} with (force)`),
  };
}

/** The build's migrated embedded database (made by `buildServer`, which the run's set-up awaits first), unpacked. */
function pgliteTemplate(): DatabaseTemplate {
  const file = embeddedTemplateFile();
  const migrations = readManifest()?.migrations ?? [];
  if (!file || migrations.join() !== migrationNames(fileURLToPath(MIGRATIONS_DIR)).join())
    throw new Error('the build made no embedded database template with every migration (see build.ts)');
  const dir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'lagoon-test-databases-'));
  const dataDir = join(dir, 'template');
  mkdirSync(dataDir);
  extractEmbeddedTemplate(file, dataDir);
  return { kind: 'pglite', ref: dataDir, remove: async () => rmSync(dir, { recursive: true, force: true }) };
}

/** A new data directory copied from the run's PGlite template, beside it (removed with it at the end of the run). */
export async function copyPgliteTemplate(templateDir: string): Promise<string> {
  const dataDir = await mkdtemp(join(dirname(templateDir), 'db-'));
  // Synchronous: fs.promises.cp takes four times as long over the directory's 1,200 files.
  cpSync(templateDir, dataDir, { recursive: true });
  return dataDir;
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
