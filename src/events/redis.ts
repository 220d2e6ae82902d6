import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import type { Logger } from '../logger.ts';

const require = createRequire(import.meta.url);

/** Commands whose promise nobody awaits (the Redis event target fires them and forgets). */
const FIRE_AND_FORGET = new Set<PropertyKey>(['publish', 'subscribe', 'unsubscribe']);

/** LAGOON_REDIS_TIMEOUT_MS's default: a command not answered within this fails, as if Redis were down. */
export const DEFAULT_REDIS_TIMEOUT_MS = 500;

/**
 * An ioredis client for Lagoon: connection errors are logged (not thrown at the process), commands fail fast
 * while Redis is away, and the fire-and-forget commands log their failure instead of leaving an unhandled
 * rejection that would stop the process. Every command has a timeout: a Redis that is hung (stopped, swapping,
 * behind a stalled network path) keeps its connections open and answers nothing, and must count as down just as
 * a Redis that closed them does, never hold a caller.
 */
export function createRedisClient(
  url: string,
  logger: Logger,
  role: string,
  options: { commandTimeoutMs?: number | undefined; subscriber?: boolean } = {},
): Redis {
  // Loaded here, not at start: most processes run without Redis (ioredis is some 40 CommonJS files).
  const { Redis: RedisClient } = require('ioredis') as { Redis: typeof Redis };
  const client = new RedisClient(url, {
    connectionName: `lagoon-${role}`,
    // Connect on first use: a process that never publishes, subscribes or caches holds no connection.
    lazyConnect: true,
    maxRetriesPerRequest: 2,
    commandTimeout: options.commandTimeoutMs ?? DEFAULT_REDIS_TIMEOUT_MS,
    // ioredis 5 loses a SUBSCRIBE sent between the TCP connect and the end of its INFO ready check (the INFO then
    // fails in subscriber mode, the client reconnects and never resubscribes). A pub/sub connection needs no ready check.
    ...(options.subscriber && { enableReadyCheck: false }),
  });
  let reported = false;
  // While Redis is hung every publish times out: the first failure is logged, the rest until one succeeds are not.
  let commandFailureLogged = false;
  client.on('error', (error: Error) => {
    if (!reported) logger.warn({ err: error, redis: role }, 'Redis connection error (retrying)');
    reported = true;
  });
  client.on('ready', () => {
    if (reported) logger.info({ redis: role }, 'Redis connection restored');
    reported = false;
  });
  return new Proxy(client, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (!FIRE_AND_FORGET.has(property) || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const result: unknown = Reflect.apply(value, target, args);
        // A command cut short because this client was closed on purpose (shutdown) is not a failure.
        if (result instanceof Promise)
          result.then(
            () => (commandFailureLogged = false),
            (error: unknown) => {
              if (client.status === 'end' || commandFailureLogged) return;
              commandFailureLogged = true;
              logger.error(
                { err: error, redis: role, command: String(property) },
                'Redis command failed (further failures are not logged until one succeeds)',
              );
            },
          );
        return result;
      };
    },
  });
}

/** Closes a client politely (QUIT), or drops it when Redis does not answer. */
export async function closeRedisClient(client: Redis): Promise<void> {
  if (client.status === 'end') return;
  if (client.status === 'wait') {
    client.disconnect(); // never connected (lazy): nothing to say goodbye to
    return;
  }
  try {
    await Promise.race([
      client.quit(),
      new Promise((_, reject) => setTimeout(() => reject(new Error('quit timed out')), 1000).unref()),
    ]);
  } catch {
    client.disconnect();
  }
}
