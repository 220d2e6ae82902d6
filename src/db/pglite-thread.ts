import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { DatabaseUnavailableError } from '../errors.ts';
import { PGLITE_WORKER } from '../runtime-files.ts';
import { CallThread, ThreadCallError, type ThreadModule } from '../worker-thread.ts';

/*
 * The embedded database in a worker thread of its own. PGlite is PostgreSQL compiled to WebAssembly: run on the
 * event loop, every statement holds it for as long as it runs (the money core's batch statement takes a few
 * milliseconds, more under load), and in a loaded server about a quarter of the main thread was PGlite's
 * (bench/RESULTS.md). In its own thread the statements run beside the requests instead of between them; each one
 * costs the event loop a message and a copy of its rows.
 */

export interface PgliteThreadData {
  readonly dataDir: string;
  /** A data directory tarball (PGlite's `dumpDataDir`) to start from, for `memory://`. */
  readonly loadDataDir?: Uint8Array<ArrayBuffer> | undefined;
  /** PGlite's engine compiled already (compilePgliteEngine), instead of compiling it again in the new thread. */
  readonly engine?: PgliteEngine | undefined;
}

/** PGlite's WebAssembly modules, compiled, and its file-system bundle: what every embedded database starts from. */
export interface PgliteEngine {
  readonly pgliteWasmModule: WebAssembly.Module;
  readonly initdbWasmModule: WebAssembly.Module;
  readonly fsBundle: Uint8Array<ArrayBuffer>;
}

/**
 * Compiles PGlite's engine once, for a process that opens many embedded databases (the test suites): each new
 * database thread is otherwise a new isolate that reads and compiles the 9 MB of WebAssembly again (~0.5 s of CPU
 * of the ~0.8 s an open costs). A compiled module passed to a thread shares its code rather than copying it.
 */
export async function compilePgliteEngine(): Promise<PgliteEngine> {
  const dist = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
  const [pgliteWasmModule, initdbWasmModule, fsBundle] = await Promise.all([
    readFile(join(dist, 'pglite.wasm')).then((bytes) => WebAssembly.compile(bytes)),
    readFile(join(dist, 'initdb.wasm')).then((bytes) => WebAssembly.compile(bytes)),
    readFile(join(dist, 'pglite.data')).then((bytes) => new Uint8Array(bytes)),
  ]);
  return { pgliteWasmModule, initdbWasmModule, fsBundle };
}

export type PgliteCall =
  | { readonly op: 'open' }
  | { readonly op: 'query'; readonly text: string; readonly params: readonly unknown[] }
  | { readonly op: 'exec'; readonly text: string }
  | { readonly op: 'listen'; readonly channel: string }
  | { readonly op: 'unlisten'; readonly channel: string }
  | { readonly op: 'dump' }
  | { readonly op: 'close' };

export interface StatementResult<Row = unknown> {
  readonly rows: Row[];
  readonly affectedRows?: number | undefined;
}

export type PgliteReply = StatementResult | StatementResult[] | Uint8Array | undefined;

/** An error PostgreSQL answered a statement with: its SQLSTATE `code` and the other fields it reported. */
export class EmbeddedDatabaseError extends Error {
  readonly code?: string;
  constructor(message: string, fields: Readonly<Record<string, string | number>>) {
    super(message);
    Object.assign(this, fields);
  }
}

/** The embedded database's thread, with the calls of a PGlite instance that Lagoon and pg-boss use. */
export class PgliteThread {
  private readonly listeners = new Map<string, Set<(payload: string) => void>>();
  private readonly thread: CallThread<PgliteCall, PgliteReply>;

  private constructor(data: PgliteThreadData, module: ThreadModule) {
    this.thread = new CallThread<PgliteCall, PgliteReply>('embedded database', module, {
      workerData: data,
      onEvent: (event) => {
        const { channel, payload } = event as { channel: string; payload: string };
        for (const listener of this.listeners.get(channel) ?? []) listener(payload);
      },
    });
  }

  /**
   * Starts the thread and waits for the database to open (a failure to open is thrown here). `module` is what the
   * thread runs: src/runtime-files.ts's, or another build of it (the tests pass the one test/global-setup.ts made).
   */
  static async open(data: PgliteThreadData, module: ThreadModule = PGLITE_WORKER): Promise<PgliteThread> {
    const opened = new PgliteThread(data, module);
    try {
      await opened.thread.call({ op: 'open' });
    } catch (error) {
      await opened.thread.close();
      throw error instanceof ThreadCallError ? new Error(error.message) : error;
    }
    return opened;
  }

  async query<Row = unknown>(text: string, params: readonly unknown[] = []): Promise<StatementResult<Row>> {
    return (await this.call({ op: 'query', text, params })) as StatementResult<Row>;
  }

  /** Statements without parameters, any number of them separated by semicolons: one result each. */
  async exec(text: string): Promise<StatementResult[]> {
    return (await this.call({ op: 'exec', text })) as StatementResult[];
  }

  /** How many channels have a listener here (the tests' pool reuses a database only with none left). */
  get channelsListened(): number {
    return this.listeners.size;
  }

  /** Whether the thread has ended (closed, or crashed): nothing answers any more. */
  get closed(): boolean {
    return this.thread.dead;
  }

  async listen(channel: string, listener: (payload: string) => void): Promise<() => Promise<void>> {
    let channelListeners = this.listeners.get(channel);
    if (!channelListeners) {
      this.listeners.set(channel, (channelListeners = new Set()));
      await this.call({ op: 'listen', channel });
    }
    channelListeners.add(listener);
    return async () => {
      channelListeners.delete(listener);
      if (channelListeners.size > 0 || this.listeners.get(channel) !== channelListeners) return;
      this.listeners.delete(channel);
      await this.call({ op: 'unlisten', channel });
    };
  }

  /** The data directory as a gzipped tarball (PGlite's dumpDataDir), for src/db/embedded-template.ts. */
  async dumpDataDir(): Promise<Uint8Array> {
    return (await this.call({ op: 'dump' })) as Uint8Array;
  }

  /** Closes the database (PGlite checkpoints a data directory on close), then ends the thread. */
  async close(): Promise<void> {
    if (this.thread.dead) return;
    try {
      await this.call({ op: 'close' });
    } finally {
      await this.thread.close();
    }
  }

  private async call(call: PgliteCall): Promise<PgliteReply> {
    try {
      return await this.thread.call(call);
    } catch (error) {
      if (error instanceof ThreadCallError) throw new EmbeddedDatabaseError(error.message, error.details);
      // The thread is gone (it crashed, or the database was closed): nothing will answer any more.
      throw new DatabaseUnavailableError({ cause: error });
    }
  }
}

/**
 * Kysely over the thread (kysely-pglite-dialect's driver takes a PGlite instance, which this is not). PGlite is one
 * connection: a caller holds it from acquire to release (a transaction
 * throughout), and the others wait their turn in arrival order.
 */
export class PgliteThreadDialect implements Dialect {
  constructor(
    private readonly database: PgliteThread,
    /** Whether destroying the Kysely instance closes the database (false: another handle takes it over after). */
    private readonly options: { closesDatabase: boolean } = { closesDatabase: true },
  ) {}
  createAdapter = () => new PostgresAdapter();
  createDriver = (): Driver => new PgliteThreadDriver(this.database, this.options.closesDatabase);
  createQueryCompiler = () => new PostgresQueryCompiler();
  createIntrospector = (db: Kysely<unknown>) => new PostgresIntrospector(db);
}

class PgliteThreadDriver implements Driver {
  private readonly connection: DatabaseConnection;
  private held = false;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly database: PgliteThread,
    private readonly closesDatabase: boolean,
  ) {
    this.connection = {
      executeQuery: async <Row>(query: CompiledQuery): Promise<QueryResult<Row>> => {
        const { rows, affectedRows } = await database.query<Row>(query.sql, query.parameters);
        return affectedRows === undefined ? { rows } : { rows, numAffectedRows: BigInt(affectedRows) };
      },
      streamQuery: () => {
        throw new Error('Streaming queries are not supported on the embedded database');
      },
    };
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.held) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.held = true;
    return this.connection;
  }

  async releaseConnection(): Promise<void> {
    const next = this.waiting.shift();
    if (next) next();
    else this.held = false;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const modes = [
      ...(settings.isolationLevel ? [`isolation level ${settings.isolationLevel}`] : []),
      ...(settings.accessMode ? [settings.accessMode] : []),
    ];
    await connection.executeQuery(CompiledQuery.raw(modes.length ? `start transaction ${modes.join(', ')}` : 'begin'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async destroy(): Promise<void> {
    if (this.closesDatabase) await this.database.close();
  }
}
