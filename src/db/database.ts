import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import {
  Kysely,
  PostgresDialect,
  sql,
  type PostgresCursor,
  type PostgresPool,
  type PostgresPoolClient,
  type PostgresQueryResult,
} from 'kysely';
import type pg from 'pg';
import { tracedDialect } from '../observability/db-spans.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { embeddedTemplateFile, extractEmbeddedTemplate } from './embedded-template-read.ts';
import { preparedNameOf } from './prepared-tag.ts';
import { asDatabaseUnavailable, isConnectionLost } from './errors.ts';
import type { PgliteEngine, PgliteThread } from './pglite-thread.ts';
import type { DB } from './types.generated.ts';
import type { ThreadModule } from '../worker-thread.ts';

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
  /** PostgreSQL: run the statements tagged `prepared:` as named prepared statements (default true). */
  preparedStatements?: boolean;
  /** PGlite in memory: start from this data directory (a tarball from `dumpDataDir`) instead of an empty one. */
  loadDataDir?: Blob;
  /**
   * PGlite on a directory with no database yet: told before the database is created there (a first start), and
   * whether it comes from the build's migrated template (src/db/embedded-template.ts) or from initdb.
   */
  onCreate?: ((from: 'template' | 'initdb') => void) | undefined;
  /** PGlite on a directory with no database yet: start from the build's migrated template (default) or initdb. */
  template?: boolean | undefined;
  /**
   * PGlite: the module its thread runs (default: the build's beside dist/main.js, or the sources with tsx
   * registered in the thread). The tests pass the build's: a thread of sources spends ~0.3 s registering tsx.
   */
  threadModule?: ThreadModule | undefined;
  /** PGlite: its engine compiled once for many databases (compilePgliteEngine; the tests), else compiled per open. */
  engine?: PgliteEngine | undefined;
}

/** How another client of the same database (the job queue, src/media/jobs/job-queue.ts) reaches it. */
export type SharedConnection =
  { readonly kind: 'postgres'; readonly url: string } | { readonly kind: 'pglite'; readonly pglite: PgliteThread };
const sharedConnections = new WeakMap<Database, SharedConnection>();
/** The URL or embedded instance behind a database opened by openDatabase (undefined for any other). */
export const sharedConnectionOf = (db: Database): SharedConnection | undefined => sharedConnections.get(db);

const INT8_OID = 20;
const DATE_OID = 1082;

// Each driver is imported only when it is used: PGlite alone costs tens of MB that a server on PostgreSQL never needs.
export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.url) return openPostgres(options.url, options.poolSize ?? 10, options.preparedStatements ?? true);
  return openPglite(options.dataDir ?? 'memory://', options);
}

async function openPostgres(url: string, poolSize: number, preparedStatements: boolean): Promise<DatabaseHandle> {
  const { default: pg } = await import('pg');
  // int8 columns hold money and must arrive as bigint from both drivers; dates stay calendar strings.
  pg.types.setTypeParser(INT8_OID, (value) => BigInt(value));
  pg.types.setTypeParser(DATE_OID, (value) => value);
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  // A server connection that drops (restart, failover, a backend ended by an administrator) makes its client emit
  // 'error'. The pool listens only while the client is idle; a client checked out by a query or a transaction has
  // no listener of its own, and an unheard 'error' event ends the process. So every client is listened to from
  // the moment it exists; the statement running on it fails on its own, and the client is discarded on release.
  pool.on('connect', (client) => client.on('error', () => undefined));
  pool.on('error', () => undefined);
  const db = new Kysely<DB>({
    dialect: tracedDialect(new PostgresDialect({ pool: lagoonPool(pool, preparedStatements) })),
  });
  sharedConnections.set(db, { kind: 'postgres', url });
  let closing: Promise<void> | undefined;
  return {
    db,
    kind: 'postgres',
    ping: () => ping(db),
    close: () => (closing ??= db.destroy()),
  };
}

const BEGIN = /^\s*(begin|start transaction)\b/i;
const END = /^\s*(commit|rollback)\b/i;
/** A statement that only reads: sent again on another connection when its own broke under it. */
const READ_ONLY = /^\s*select\b/i;

function lagoonPool(pool: pg.Pool, preparedStatements: boolean): PostgresPool {
  const clients = new WeakMap<pg.PoolClient, LagoonClient>();
  return {
    async connect() {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw asDatabaseUnavailable(error);
      }
      // The same wrapper for the same connection: Kysely keeps its per-connection state keyed by this object.
      let wrapped = clients.get(client);
      if (!wrapped) clients.set(client, (wrapped = new LagoonClient(pool, client, preparedStatements)));
      return wrapped;
    },
    end: () => pool.end(),
  };
}

/**
 * A pooled connection as Kysely sees it. A lost connection fails its statement with DatabaseUnavailableError
 * (answered 503); outside a transaction, a statement whose connection was already broken before it was sent, or a
 * read-only one, is sent once more on a fresh connection. A broken connection goes back to the pool as broken,
 * which discards it.
 */
class LagoonClient implements PostgresPoolClient {
  private broken: Error | undefined;
  private inTransaction = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly client: pg.PoolClient,
    private readonly preparedStatements: boolean,
  ) {
    client.on('error', (error: Error) => (this.broken ??= error));
  }

  query<R>(sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(
    statement: string | PostgresCursor<R>,
    parameters: readonly unknown[] = [],
  ): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    // Kysely passes a cursor only when the dialect is given a cursor class, which Lagoon's is not.
    if (typeof statement !== 'string') throw new Error('Cursors are not configured');
    // Tagged statements (prepared-tag.ts) are prepared once per pooled connection: parsing and planning the money
    // core's batch statements was about half of PostgreSQL's CPU on the benchmark's load. Untagged ones go as they are:
    // Kysely builds many shapes (IN lists of any length) that would fill the server's statement cache. Off with
    // LAGOON_PG_PREPARED_STATEMENTS=false, for a connection pooler that cannot carry named statements across
    // server connections (PgBouncer in transaction mode before 1.21, or without max_prepared_statements).
    const name = this.preparedStatements ? preparedNameOf(statement) : undefined;
    const values = parameters as unknown[]; // Kysely's own copy, and pg only reads it
    const config = name === undefined ? { text: statement, values } : { name, text: statement, values };
    return this.run<R>(config);
  }

  private async run<R>(config: pg.QueryConfig): Promise<PostgresQueryResult<R>> {
    const inTransaction = this.inTransaction || BEGIN.test(config.text);
    const brokenBefore = this.broken !== undefined;
    this.inTransaction = inTransaction && !END.test(config.text);
    try {
      return resultOf<R>(await this.client.query<R & pg.QueryResultRow>(config));
    } catch (error) {
      if (!isConnectionLost(error)) throw error;
      this.broken ??= error instanceof Error ? error : new Error(String(error));
      if (inTransaction || !(brokenBefore || READ_ONLY.test(config.text))) throw asDatabaseUnavailable(error);
      return this.again<R>(config);
    }
  }

  private async again<R>(config: pg.QueryConfig): Promise<PostgresQueryResult<R>> {
    let fresh: pg.PoolClient | undefined;
    try {
      fresh = await this.pool.connect();
      const result = await fresh.query<R & pg.QueryResultRow>(config);
      fresh.release();
      return resultOf<R>(result);
    } catch (error) {
      fresh?.release(isConnectionLost(error));
      throw asDatabaseUnavailable(error);
    }
  }

  release(): void {
    const broken = this.broken;
    this.broken = undefined;
    this.inTransaction = false;
    this.client.release(broken);
  }
}

function resultOf<R>({ command, rowCount, rows }: pg.QueryResult<R & pg.QueryResultRow>): PostgresQueryResult<R> {
  return { command: command as PostgresQueryResult<R>['command'], rowCount: rowCount ?? 0, rows };
}

async function openPglite(
  dataDir: string,
  { loadDataDir, onCreate, template = true, threadModule, engine }: DatabaseOptions,
): Promise<DatabaseHandle> {
  const { PgliteThread } = await import('./pglite-thread.ts');
  const inMemory = dataDir.startsWith('memory://');
  if (!inMemory) mkdirSync(dataDir, { recursive: true });
  const unlock = inMemory ? () => undefined : lockDataDir(dataDir);
  let pglite: PgliteThread;
  try {
    const tarball = inMemory && loadDataDir ? new Uint8Array(await loadDataDir.arrayBuffer()) : undefined;
    if (!inMemory && !existsSync(join(dataDir, 'PG_VERSION'))) {
      const templateFile = template ? embeddedTemplateFile() : undefined;
      onCreate?.(templateFile ? 'template' : 'initdb');
      if (templateFile) extractEmbeddedTemplate(templateFile, dataDir);
      else await createPgliteDataDir(dataDir);
    }
    pglite = await PgliteThread.open({ dataDir, loadDataDir: tarball, engine }, threadModule);
  } catch (error) {
    unlock();
    throw error;
  }
  // Kysely's destroy waits for the connection queue, then closes PGlite, which checkpoints the data dir.
  return handleOverPglite(pglite, { closesDatabase: true, onClose: unlock });
}

/**
 * A handle over an embedded database's thread. With `closesDatabase: false` its close ends only this handle (its
 * queries fail from then on) and the thread stays open for another: the tests' pool of embedded databases.
 */
export async function handleOverPglite(
  pglite: PgliteThread,
  options: { closesDatabase: boolean; onClose?: () => void },
): Promise<DatabaseHandle> {
  const { PgliteThreadDialect } = await import('./pglite-thread.ts');
  const dialect = new PgliteThreadDialect(pglite, { closesDatabase: options.closesDatabase });
  const db = new Kysely<DB>({ dialect: tracedDialect(dialect) });
  sharedConnections.set(db, { kind: 'pglite', pglite });
  let closed = false;
  return {
    db,
    kind: 'pglite',
    ping: () => ping(db),
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
      options.onClose?.();
    },
  };
}

/**
 * Creates an embedded data directory (initdb) in a short-lived child process: initdb touches some 500 MB of
 * WebAssembly memory, which an instance never gives back, so a server that ran it itself would carry it forever.
 * The child runs V8's baseline WebAssembly code only (`--liftoff-only`): it lives seconds, too short for the optimizing
 * tier to pay back its compile (9.9 s of CPU with it, 7.2 s without, on a 2-core host).
 */
async function createPgliteDataDir(dataDir: string): Promise<void> {
  const pgliteModule = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const script = `require(${JSON.stringify(pgliteModule)}).PGlite.create(${JSON.stringify(dataDir)}).then((db) => db.close())`;
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ['--liftoff-only', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code === 0) resolve();
      else
        reject(
          new Error(
            `Could not create the embedded database in ${dataDir} (${signal ?? `exit code ${code}`}): ${stderr.trim().split('\n').slice(-3).join(' ')}`,
          ),
        );
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
