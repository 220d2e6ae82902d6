import { rm } from 'node:fs/promises';
import { handleOverPglite, type DatabaseHandle } from '../../src/db/database.ts';
import type { PgliteThread } from '../../src/db/pglite-thread.ts';

/*
 * The embedded test databases of one test worker, used again: opening one costs ~0.5 s of CPU (its thread, PGlite's
 * start), putting one back as the template left it ~0.1 s. A database given back is emptied (every table of the
 * template that holds rows truncated, the schemas the app made dropped, the session's state reset) and then compared
 * with the template's fingerprint (columns, indexes, constraints, triggers, functions, schemas, roles, migrations):
 * anything a test changed that the reset does not undo shows there, and that database is closed and deleted instead.
 */

export interface PooledDatabase {
  readonly thread: PgliteThread;
  readonly dataDir: string;
}

/** Idle databases kept per worker: each holds its WebAssembly memory (~100–200 MB). */
const MAX_IDLE = 2;

const FINGERPRINT = `select md5(coalesce(string_agg(item, ',' order by item), '')) as fingerprint from (
  select 'c:' || table_schema || '.' || table_name || '.' || column_name || ':' || data_type || ':' ||
    coalesce(column_default, '') || ':' || is_nullable as item
    from information_schema.columns where table_schema not in ('pg_catalog', 'information_schema')
  union all select 'i:' || schemaname || '.' || indexname || ':' || indexdef
    from pg_indexes where schemaname not in ('pg_catalog', 'information_schema')
  union all select 'k:' || conrelid::regclass::text || '.' || conname || ':' || pg_get_constraintdef(oid)
    from pg_constraint where connamespace = 'public'::regnamespace
  union all select 't:' || tgrelid::regclass::text || '.' || tgname from pg_trigger where not tgisinternal
  union all select 'f:' || n.nspname || '.' || p.proname || ':' || md5(p.prosrc)
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname not in ('pg_catalog', 'information_schema')
  union all select 'n:' || nspname from pg_namespace where nspname not like 'pg\\_%' and nspname <> 'information_schema'
  union all select 'r:' || rolname from pg_roles
  union all select 'm:' || name from kysely_migration
) items`;

const fingerprintOf = async (thread: PgliteThread): Promise<string> =>
  (await thread.query<{ fingerprint: string }>(FINGERPRINT)).rows[0]?.fingerprint ?? '';

export class PglitePool {
  private readonly idle: PooledDatabase[] = [];
  private template: Promise<{ fingerprint: string; schemas: string[] }> | undefined;

  /** `open`: a new database, a copy of the run's migrated template. */
  constructor(private readonly open: () => Promise<PooledDatabase>) {}

  /** A database as the template has it, and how to give it back (its handle closed first, if not already). */
  async take(): Promise<{ handle: DatabaseHandle; giveBack(): Promise<void> }> {
    const pooled = this.idle.pop() ?? (await this.fresh());
    const handle = await handleOverPglite(pooled.thread, { closesDatabase: false });
    let givenBack = false;
    return {
      handle,
      giveBack: async () => {
        if (givenBack) return;
        givenBack = true;
        await handle.close();
        if (this.idle.length < MAX_IDLE && (await this.reset(pooled))) this.idle.push(pooled);
        else await discard(pooled);
      },
    };
  }

  private async fresh(): Promise<PooledDatabase> {
    const pooled = await this.open();
    this.template ??= (async () => ({
      fingerprint: await fingerprintOf(pooled.thread),
      schemas: await schemasOf(pooled.thread),
    }))();
    await this.template;
    return pooled;
  }

  /** Whether the database is as the template again. */
  private async reset({ thread }: PooledDatabase): Promise<boolean> {
    if (thread.closed || thread.channelsListened > 0 || !this.template) return false;
    const template = await this.template;
    try {
      // A transaction a test left open ends (PostgreSQL only warns when there is none).
      await thread.exec('rollback');
      for (const statement of [
        'close all',
        'reset all',
        'unlisten *',
        'select pg_advisory_unlock_all()',
        'discard temp',
      ])
        await thread.query(statement);
      for (const schema of await schemasOf(thread))
        if (!template.schemas.includes(schema)) await thread.query(`drop schema "${schema}" cascade`);
      const { rows: tables } = await thread.query<{ name: string }>(
        `select tablename as name from pg_tables where schemaname = 'public'
           and tablename not in ('kysely_migration', 'kysely_migration_lock')`,
      );
      // Only the tables a test wrote to: a truncate gives each table and index new files, ~4 ms a table even empty.
      const written =
        tables.length === 0
          ? []
          : (
              await thread.query<{ name: string }>(
                tables
                  .map(({ name }) => `select '${name}' as name where exists (select from public."${name}")`)
                  .join(' union all '),
              )
            ).rows;
      if (written.length > 0)
        await thread.query(`truncate ${written.map(({ name }) => `public."${name}"`).join(', ')} cascade`);
      // Every sequence from its start, owned by a column or not.
      const { rows: sequences } = await thread.query<{ name: string }>(
        `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
          where c.relkind = 'S' and n.nspname = 'public'`,
      );
      for (const { name } of sequences) await thread.query(`alter sequence public."${name}" restart`);
      return (await fingerprintOf(thread)) === template.fingerprint;
    } catch {
      return false;
    }
  }
}

async function schemasOf(thread: PgliteThread): Promise<string[]> {
  const { rows } = await thread.query<{ name: string }>(
    `select nspname as name from pg_namespace where nspname not like 'pg\\_%' and nspname <> 'information_schema'`,
  );
  return rows.map(({ name }) => name);
}

async function discard({ thread, dataDir }: PooledDatabase): Promise<void> {
  await thread.close().catch(() => undefined);
  await rm(dataDir, { recursive: true, force: true });
}
