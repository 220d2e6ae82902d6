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
