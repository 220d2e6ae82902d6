import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryResult } from 'kysely';
import { SpanKind } from '@opentelemetry/api';
import { hasActiveSpan, inSpan, tracingOn } from './tracing.ts';

/*
 * A span per database statement run for a traced request or job, made at the driver's connection (so raw statements,
 * pg-boss's statements through Kysely and failed ones are all seen; a transaction's BEGIN and COMMIT are not). The
 * span carries the statement's verb only: the SQL text and its parameters stay out (a parameter may be a prompt stored
 * with a job). When tracing is off the dialect is returned as it is: not one wrapper on the path of a query.
 */

const VERBS = new Set([
  'SELECT',
  'INSERT',
  'UPDATE',
  'DELETE',
  'WITH',
  'BEGIN',
  'COMMIT',
  'ROLLBACK',
  'SAVEPOINT',
  'RELEASE',
  'LOCK',
  'CREATE',
  'ALTER',
  'DROP',
]);

/** The dialect with a span around each statement, or the dialect itself when tracing is off. */
export function tracedDialect(dialect: Dialect): Dialect {
  if (!tracingOn()) return dialect;
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => tracedDriver(dialect.createDriver()),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
  };
}

function tracedDriver(driver: Driver): Driver {
  const wrapped = new WeakMap<DatabaseConnection, DatabaseConnection>();
  const inner = new WeakMap<DatabaseConnection, DatabaseConnection>();
  const unwrap = (connection: DatabaseConnection) => inner.get(connection) ?? connection;
  const traced: Driver = {
    init: () => driver.init(),
    async acquireConnection() {
      const connection = await driver.acquireConnection();
      // The same wrapper for the same connection: Kysely keeps per-connection state keyed by the object.
      let outer = wrapped.get(connection);
      if (!outer) {
        outer = tracedConnection(connection);
        wrapped.set(connection, outer);
        inner.set(outer, connection);
      }
      return outer;
    },
    beginTransaction: (connection, settings) => driver.beginTransaction(unwrap(connection), settings),
    commitTransaction: (connection) => driver.commitTransaction(unwrap(connection)),
    rollbackTransaction: (connection) => driver.rollbackTransaction(unwrap(connection)),
    releaseConnection: (connection) => driver.releaseConnection(unwrap(connection)),
    destroy: () => driver.destroy(),
  };
  if (driver.savepoint) {
    const { savepoint, rollbackToSavepoint, releaseSavepoint } = driver;
    traced.savepoint = (connection, name, compile) => savepoint.call(driver, unwrap(connection), name, compile);
    if (rollbackToSavepoint)
      traced.rollbackToSavepoint = (connection, name, compile) =>
        rollbackToSavepoint.call(driver, unwrap(connection), name, compile);
    if (releaseSavepoint)
      traced.releaseSavepoint = (connection, name, compile) =>
        releaseSavepoint.call(driver, unwrap(connection), name, compile);
  }
  return traced;
}

function tracedConnection(connection: DatabaseConnection): DatabaseConnection {
  return {
    executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      // Background statements (the job queue's polling, batched writes on their own timer) start no trace.
      if (!hasActiveSpan()) return connection.executeQuery<R>(query);
      const verb = verbOf(query.sql);
      return inSpan(
        `db ${verb}`,
        { 'db.system.name': 'postgresql', 'db.operation.name': verb },
        () => connection.executeQuery<R>(query),
        SpanKind.CLIENT,
      );
    },
    streamQuery: <R>(query: CompiledQuery, chunkSize?: number) => connection.streamQuery<R>(query, chunkSize),
  };
}

/** The statement's first word when it is a known verb (a bounded set of span names), else OTHER. */
function verbOf(sql: string): string {
  const verb = /^\s*\(?\s*([a-zA-Z]+)/.exec(sql)?.[1]?.toUpperCase() ?? 'OTHER';
  return VERBS.has(verb) ? verb : 'OTHER';
}
