import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Migrator, sql, type Kysely, type Migration } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.ts';
import { MIGRATIONS_DIR, migrateToLatest, schemaReady } from '../../src/db/migrate.ts';
import { MIGRATION_NAME, renameTimestampMigrations, TIMESTAMP_NAMES } from '../../src/db/migration-names.ts';
import { adminQuery, withDatabase } from '../helpers/db-template.ts';
import { embeddedThreadOptions, TEST_DATABASE_URL, testDatabaseKind } from '../helpers/db.ts';
import { scaled } from '../helpers/time-scale.ts';

const names = readdirSync(MIGRATIONS_DIR)
  .filter((file) => file.endsWith('.ts'))
  .sort()
  .map((file) => file.slice(0, -'.ts'.length));

describe('migration file names', () => {
  it('should all be <4-digit sequence>_<snake_case>, numbered 1, 2, 3 … with none missing', () => {
    expect(readdirSync(MIGRATIONS_DIR).filter((file) => !file.endsWith('.ts'))).toEqual([]);
    for (const name of names) expect(name).toMatch(MIGRATION_NAME);
    const sequence = names.map((name) => Number(MIGRATION_NAME.exec(name)?.[1]));
    expect(sequence).toEqual(names.map((_, index) => index + 1));
  });

  it('should map every former timestamp name onto the first files, in the order they sorted', () => {
    const old = TIMESTAMP_NAMES.map(([timestampName]) => timestampName);
    expect([...old].sort()).toEqual(old);
    expect(TIMESTAMP_NAMES.map(([, current]) => current)).toEqual(names.slice(0, TIMESTAMP_NAMES.length));
  });
});

/** A new, empty database; `onDisk` keeps a PGlite one in a data directory, to be opened again (a restart). */
interface Store {
  open(): Promise<DatabaseHandle>;
  remove(): Promise<void>;
}

async function emptyStore(onDisk: boolean): Promise<Store> {
  if (TEST_DATABASE_URL) {
    const server = TEST_DATABASE_URL;
    const name = `lagoon_test_${randomBytes(6).toString('hex')}`;
    await adminQuery(server, `create database ${name}`);
    return {
      open: () => openDatabase({ url: withDatabase(server, name), poolSize: 2 }),
      remove: () => adminQuery(server, `drop database if exists ${name} with (force)`),
    };
  }
  if (!onDisk) {
    const handle = await openDatabase({ dataDir: 'memory://', ...(await embeddedThreadOptions()) });
    return { open: async () => ({ ...handle, close: async () => undefined }), remove: () => handle.close() };
  }
  const dir = mkdtempSync(join(tmpdir(), 'lagoon-migration-names-'));
  return {
    // initdb, not the build's migrated template: these tests migrate from nothing the way an older build did.
    open: async () => openDatabase({ dataDir: join(dir, 'data'), template: false, ...(await embeddedThreadOptions()) }),
    remove: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Applies the first `count` migrations as a build from before the rename did: recorded under timestamp names. */
async function migrateUnderTimestampNames<T>(db: Kysely<T>, count: number): Promise<void> {
  const provider = {
    async getMigrations(): Promise<Record<string, Migration>> {
      const entries = await Promise.all(
        TIMESTAMP_NAMES.slice(0, count).map(async ([old, current]) => {
          const file = pathToFileURL(join(MIGRATIONS_DIR, `${current}.ts`)).href;
          return [old, (await import(file)) as Migration] as const;
        }),
      );
      return Object.fromEntries(entries);
    },
  };
  const { error } = await new Migrator({ db, provider }).migrateToLatest();
  if (error) throw error;
}

const recordedNames = async <T>(db: Kysely<T>): Promise<string[]> =>
  (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db)).rows.map((r) => r.name);

describe(`upgrading a database migrated under timestamp names (${testDatabaseKind})`, () => {
  it(
    'should rename the recorded migrations, then apply only the ones it lacks',
    { timeout: scaled(120_000) },
    async () => {
      const store = await emptyStore(true);
      try {
        const before = await store.open();
        try {
          await migrateUnderTimestampNames(before.db, 12);
          expect(await recordedNames(before.db)).toEqual(TIMESTAMP_NAMES.slice(0, 12).map(([old]) => old));
        } finally {
          await before.close();
        }

        const after = await store.open(); // the next start, on the new build
        try {
          const { results } = await migrateToLatest(after.db);
          expect(results?.map((r) => [r.migrationName, r.status])).toEqual(
            names.slice(12).map((name) => [name, 'Success']),
          );
          expect(await recordedNames(after.db)).toEqual(names);
          expect(await schemaReady(after.db)).toBe(true);

          // Every later start: nothing left to rename or apply.
          expect(await renameTimestampMigrations(after.db)).toBe(0);
          expect((await migrateToLatest(after.db)).results).toEqual([]);
          expect(await recordedNames(after.db)).toEqual(names);
        } finally {
          await after.close();
        }
      } finally {
        await store.remove();
      }
    },
  );

  it(
    'should take a fully migrated database as it is: names rewritten, nothing applied',
    { timeout: scaled(120_000) },
    async () => {
      const store = await emptyStore(false);
      try {
        const handle = await store.open();
        try {
          await migrateUnderTimestampNames(handle.db, TIMESTAMP_NAMES.length);
          const { results } = await migrateToLatest(handle.db);
          expect(results?.map((r) => r.migrationName)).toEqual(names.slice(TIMESTAMP_NAMES.length));
          expect(await recordedNames(handle.db)).toEqual(names);
        } finally {
          await handle.close();
        }
      } finally {
        await store.remove();
      }
    },
  );
});
