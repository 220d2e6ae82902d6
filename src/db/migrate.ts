import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Kysely, Migration, MigrationProvider, MigrationResultSet } from 'kysely';
import { Migrator, sql } from 'kysely';
import { MIGRATIONS_DIR as MIGRATIONS_URL } from '../runtime-files.ts';
import { migrationTablePresent, renameTimestampMigrations } from './migration-names.ts';

export const MIGRATIONS_DIR = fileURLToPath(MIGRATIONS_URL);

/**
 * Loads the files in migrations/ (named as migration-names.ts says) by importing them (.ts under tsx and vitest,
 * .js when built).
 */
class ImportingMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    const files = await migrationFiles();
    const migrations: Record<string, Migration> = {};
    for (const file of files) {
      const module = (await import(pathToFileURL(join(MIGRATIONS_DIR, file)).href)) as Migration;
      migrations[migrationName(file)] = { up: module.up, down: module.down };
    }
    return migrations;
  }
}

export class MigrationFailedError extends Error {}

/**
 * Applies the migrations not applied yet. `onPending` hears their names first, when there are any (the start says
 * "applying 21 migrations…" before a first start's wait).
 */
export async function migrateToLatest<T>(
  db: Kysely<T>,
  onPending?: (names: readonly string[]) => void,
): Promise<MigrationResultSet> {
  // The usual start: every migration already applied. Two reads instead of the migrator's table checks, lock and
  // module imports (~0.3 s on the embedded database).
  if (await upToDate(db)) return { results: [] };
  await renameTimestampMigrations(db);
  const migrator = new Migrator({ db, provider: new ImportingMigrationProvider() });
  if (onPending) {
    const pending = (await migrator.getMigrations()).filter((migration) => !migration.executedAt);
    if (pending.length > 0) onPending(pending.map((migration) => migration.name));
  }
  const result = await migrator.migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error');
    const cause = result.error instanceof Error ? result.error.message : String(result.error);
    throw new MigrationFailedError(`Migration ${failed?.migrationName ?? '(unknown)'} failed: ${cause}`);
  }
  return result;
}

/** Whether the applied migrations are exactly this build's (none missing, none unknown). */
async function upToDate<T>(db: Kysely<T>): Promise<boolean> {
  if (!(await migrationTablePresent(db))) return false;
  const names = (await migrationFiles()).map(migrationName).sort();
  const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
  const applied = rows.map((row) => row.name).sort();
  return applied.length === names.length && applied.every((name, index) => name === names[index]);
}

const migrationName = (file: string): string => file.replace(/\.(ts|js)$/, '');

const migrationFiles = async (): Promise<string[]> =>
  (await readdir(MIGRATIONS_DIR)).filter((file) => /\.(ts|js)$/.test(file) && !file.endsWith('.d.ts')).sort();

let latestMigration: Promise<string | undefined> | undefined;
/** Tables every request path needs. */
const CORE_TABLES = [
  'accounts',
  'balances',
  'account_ledger',
  'api_keys',
  'api_key_spend',
  'reservations',
  'usage_entries',
  'usage_daily',
  'models',
];

/**
 * Whether the database carries this build's schema: its newest migration recorded as applied and the core tables
 * present (a database restored from an old backup, or emptied, answers queries but cannot serve). False also when
 * the database cannot be reached.
 */
export async function schemaReady<T>(db: Kysely<T>): Promise<boolean> {
  latestMigration ??= migrationFiles().then((files) => {
    const last = files.at(-1);
    return last === undefined ? undefined : migrationName(last);
  });
  const latest = await latestMigration;
  try {
    const tables = sql.join(
      CORE_TABLES.map((table) => sql`to_regclass(${table}) is not null`),
      sql` and `,
    );
    const { rows } = await sql<{
      ready: boolean;
    }>`select (${tables}) and exists (select 1 from kysely_migration where name = ${latest ?? ''}) as ready`.execute(
      db,
    );
    return rows[0]?.ready === true;
  } catch {
    return false; // no migrations table, or no database
  }
}
