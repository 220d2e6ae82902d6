import { DatabaseUnavailableError } from '../errors.ts';

/*
 * What an operator reads when the server cannot reach PostgreSQL at start: the host, port, user and database it
 * tried (never the password), the error code, and what to check. The pool's own errors say only "The database is
 * unavailable", which names none of them.
 */

/** The start could not connect to PostgreSQL; the message says where, why and what to check. */
export class DatabaseConnectError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DatabaseConnectError';
  }
}

interface Target {
  readonly host: string;
  readonly port: string;
  readonly user: string;
  readonly database: string;
}

/** Where a postgres:// URL points, with pg's defaults (localhost:5432, the user's name as the database). */
export function connectionTarget(url: string): Target {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { host: '(unparsable DATABASE_URL)', port: '?', user: '?', database: '?' };
  }
  const user = decodeURIComponent(parsed.username) || 'the default user';
  const socketHost = parsed.searchParams.get('host');
  return {
    host: socketHost ?? (parsed.hostname.replace(/^\[|\]$/g, '') || 'localhost'),
    port: parsed.port || parsed.searchParams.get('port') || '5432',
    user,
    database: decodeURIComponent(parsed.pathname.replace(/^\//, '')) || user,
  };
}

const codeOf = (error: unknown): string | undefined => {
  if (typeof error !== 'object' || error === null) return undefined;
  if ('code' in error && typeof error.code === 'string') return error.code;
  // Node tries every address of a name (IPv6 and IPv4 for localhost): the first one's code stands for all.
  if ('errors' in error && Array.isArray(error.errors)) return codeOf(error.errors[0]);
  return undefined;
};

/** Why, in words, and what to check, by error code (socket errors and PostgreSQL's SQLSTATEs). */
function advice(code: string | undefined, at: string, target: Target): string {
  switch (code) {
    case 'ECONNREFUSED':
      return `nothing accepts connections at ${at}. Check that PostgreSQL is running and listening there (listen_addresses, port) and that DATABASE_URL names the right host and port.`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the host name ${target.host} does not resolve. Check the host in DATABASE_URL and the machine's DNS.`;
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `${at} does not answer. Check the address in DATABASE_URL, the network path and any firewall in between.`;
    case 'ECONNRESET':
      return `${at} closed the connection. Check that it is PostgreSQL (not another service) and its SSL settings (sslmode in DATABASE_URL).`;
    case '28P01':
    case '28000':
      return `PostgreSQL refused user "${target.user}". Check the user and password in DATABASE_URL and pg_hba.conf on the server.`;
    case '3D000':
      return `the database "${target.database}" does not exist on ${at}. Create it (createdb ${target.database}) or fix its name in DATABASE_URL.`;
    case '53300':
      return `PostgreSQL at ${at} has no connection slot left. Raise max_connections or lower the other clients' pools.`;
    case '57P03':
      return `PostgreSQL at ${at} is starting up or shutting down. Wait for it, then start Lagoon again.`;
    default:
      return `Check DATABASE_URL and that PostgreSQL runs at ${at}.`;
  }
}

/** The start's error for a failed first connection to `url` (the password left out). */
export function describeConnectFailure(url: string, error: unknown): DatabaseConnectError {
  const target = connectionTarget(url);
  const at = `${target.host}:${target.port}`;
  const code = codeOf(error);
  const detail = error instanceof Error && error.message ? `: ${error.message}` : '';
  return new DatabaseConnectError(
    `Cannot connect to PostgreSQL at ${at} (database "${target.database}", user "${target.user}") — ${code ?? 'no error code'}${detail}. ${capitalise(advice(code, at, target))}`,
    code,
    { cause: error },
  );
}

const capitalise = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** How long the start waits for PostgreSQL's first answer (an address that drops packets never refuses). */
export const FIRST_CONNECT_TIMEOUT_MS = 15_000;

/**
 * The start's first statement on PostgreSQL, so that a server that cannot reach it says where and why before
 * anything else (the migrations would otherwise fail with the pool's bare "The database is unavailable").
 */
export async function checkConnection(
  url: string,
  ping: () => Promise<unknown>,
  timeoutMs = FIRST_CONNECT_TIMEOUT_MS,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      const error = Object.assign(new Error(`no answer within ${timeoutMs / 1000} s`), { code: 'ETIMEDOUT' });
      reject(error);
    }, timeoutMs);
  });
  try {
    await Promise.race([ping(), timedOut]);
  } catch (error) {
    throw describeConnectFailure(url, rootCause(error));
  } finally {
    clearTimeout(timer);
  }
}

/** The driver's error under the pool's wrapper (DatabaseUnavailableError keeps it as its cause). */
function rootCause(error: unknown): unknown {
  let current = error;
  while (
    current instanceof Error &&
    current.cause !== undefined &&
    (current instanceof DatabaseUnavailableError || codeOf(current) === undefined)
  ) {
    current = current.cause;
  }
  return current;
}
