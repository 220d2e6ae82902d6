import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { lockDataDir } from './data-dir-lock.ts';
import type { DB } from './types.generated.ts';

export type Database = Kysely<DB>;

export interface DatabaseHandle {
  readonly db: Database;
  readonly kind: 'pglite' | 'postgres';
  /** Whether the database answers a trivial query. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** postgres:// URL; when absent an embedded PGlite database is used. */
  url?: string | undefined;
  /** PGlite data directory; `memory://` keeps it in memory. */
  dataDir?: string;
  poolSize?: number;
}

const INT8_OID = 20;
const DATE_OID = 1082;

// Each driver is imported only when it is used: PGlite alone costs tens of MB that a server on PostgreSQL never needs.
export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.url) return openPostgres(options.url, options.poolSize ?? 10);
  return openPglite(options.dataDir ?? 'memory://');
}

async function openPostgres(url: string, poolSize: number): Promise<DatabaseHandle> {
  const { default: pg } = await import('pg');
  // int8 columns hold money and must arrive as bigint from both drivers; dates stay calendar strings.
  pg.types.setTypeParser(INT8_OID, (value) => BigInt(value));
  pg.types.setTypeParser(DATE_OID, (value) => value);
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  // An idle client whose server connection drops (restart, failover) emits here; without a listener the
  // process would crash. The pool replaces the client on the next checkout.
  pool.on('error', () => undefined);
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  let closing: Promise<void> | undefined;
  return {
    db,
    kind: 'postgres',
    ping: () => ping(db),
    close: () => (closing ??= db.destroy()),
  };
}

async function openPglite(dataDir: string): Promise<DatabaseHandle> {
  const [{ PGlite, types: pgliteTypes }, { PGliteDialect }] = await Promise.all([import('@electric-sql/pglite'), import('kysely-pglite-dialect')]);
  const inMemory = dataDir.startsWith('memory://');
  if (!inMemory) mkdirSync(dataDir, { recursive: true });
  const unlock = inMemory ? () => undefined : lockDataDir(dataDir);
  if (!inMemory) {
    await createPgliteDataDir(dataDir).catch((error: unknown) => {
      unlock();
      throw error;
    });
  }
  const pglite = await PGlite.create(dataDir, {
    // Postgres touches all of its shared buffers at start, and WebAssembly memory is never given back: 16 MB
    // (instead of 128) is plenty for Lagoon's hot rows and keeps the server ~110 MB smaller.
    postgresqlconf: ['shared_buffers = 16MB'],
    parsers: {
      [pgliteTypes.INT8]: (value: string) => BigInt(value),
      [pgliteTypes.DATE]: (value: string) => value,
    },
  }).catch((error: unknown) => {
    unlock();
    throw error;
  });
  const db = new Kysely<DB>({ dialect: new PGliteDialect(pglite) });
  let closed = false;
  return {
    db,
    kind: 'pglite',
    ping: () => ping(db),
    async close() {
      if (closed) return;
      closed = true;
      // Kysely's destroy waits for the connection queue, then closes PGlite, which checkpoints the data dir.
      await db.destroy();
      unlock();
    },
  };
}

/**
 * Creates an embedded data directory (initdb) in a short-lived child process: initdb touches some 500 MB of
 * WebAssembly memory, which an instance never gives back, so a server that ran it itself would carry it forever.
 */
async function createPgliteDataDir(dataDir: string): Promise<void> {
  if (existsSync(join(dataDir, 'PG_VERSION'))) return;
  const pgliteModule = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const script = `require(${JSON.stringify(pgliteModule)}).PGlite.create(${JSON.stringify(dataDir)}).then((db) => db.close())`;
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`Could not create the embedded database in ${dataDir} (${signal ?? `exit code ${code}`}): ${stderr.trim().split('\n').slice(-3).join(' ')}`));
    });
  });
}

async function ping(db: Database): Promise<boolean> {
  try {
    await sql`select 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}
