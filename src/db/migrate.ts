import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Kysely, Migration, MigrationProvider, MigrationResultSet } from 'kysely';
import { Migrator } from 'kysely';
import { MIGRATIONS_DIR as MIGRATIONS_URL } from '../runtime-files.ts';

export const MIGRATIONS_DIR = fileURLToPath(MIGRATIONS_URL);

/** Loads the timestamp-named files in migrations/ by importing them (.ts under tsx and vitest, .js when built). */
class ImportingMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    const files = (await readdir(MIGRATIONS_DIR)).filter((file) => /\.(ts|js)$/.test(file) && !file.endsWith('.d.ts')).sort();
    const migrations: Record<string, Migration> = {};
    for (const file of files) {
      const module = (await import(pathToFileURL(join(MIGRATIONS_DIR, file)).href)) as Migration;
      migrations[file.replace(/\.(ts|js)$/, '')] = { up: module.up, down: module.down };
    }
    return migrations;
  }
}

export class MigrationFailedError extends Error {}

export async function migrateToLatest<T>(db: Kysely<T>): Promise<MigrationResultSet> {
  const migrator = new Migrator({ db, provider: new ImportingMigrationProvider() });
  const result = await migrator.migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error');
    const cause = result.error instanceof Error ? result.error.message : String(result.error);
    throw new MigrationFailedError(`Migration ${failed?.migrationName ?? '(unknown)'} failed: ${cause}`);
  }
  return result;
}
