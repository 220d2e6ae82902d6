import { DatabaseUnavailableError } from '../errors.ts';

/**
 * Whether the database refused a statement (an SQLSTATE error such as a constraint or a data exception), as
 * opposed to not being reached at all or being briefly unable to run it (a lost connection, a server shutting down
 * or overloaded, a serialisation failure or deadlock): the latter are worth retrying as they are.
 */
export function isRefusedByDatabase(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  if (typeof code !== 'string' || !SQLSTATE.test(code)) return false;
  return !TRANSIENT_CLASSES.has(code.slice(0, 2));
}

const SQLSTATE = /^[0-9A-Z]{5}$/;
/** Connection exception, transaction rollback, insufficient resources, operator intervention, system error. */
const TRANSIENT_CLASSES = new Set(['08', '40', '53', '57', '58']);

/**
 * Whether an error means the connection to the database was lost or could not be made (a restart, a failover, an
 * administrator ending backends), rather than a statement being refused: the one place that tells them apart.
 */
export function isConnectionLost(error: unknown): boolean {
  if (error instanceof DatabaseUnavailableError) return true;
  if (typeof error !== 'object' || error === null) return false;
  const code = 'code' in error ? error.code : undefined;
  if (typeof code === 'string') {
    if (LOST_CODES.has(code) || (SQLSTATE.test(code) && code.startsWith('08'))) return true;
  }
  const message = 'message' in error && typeof error.message === 'string' ? error.message : '';
  return LOST_MESSAGES.test(message);
}

/** Shutdown by an administrator, a crash, a server not accepting connections yet; sockets reset or refused. */
const LOST_CODES = new Set([
  '57P01',
  '57P02',
  '57P03',
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
/** What pg throws without a code when the socket closes under a query, or when a client already broke. */
const LOST_MESSAGES =
  /^(Connection terminated|Client has encountered a connection error|Client was closed and is not queryable)/;

/** The error to answer with when the connection was lost, else the error itself. */
export function asDatabaseUnavailable(error: unknown): unknown {
  return !(error instanceof DatabaseUnavailableError) && isConnectionLost(error)
    ? new DatabaseUnavailableError({ cause: error })
    : error;
}
