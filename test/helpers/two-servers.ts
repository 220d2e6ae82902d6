import type { ChildProcess } from 'node:child_process';
import { freePort } from './free-port.ts';
import { startPrivateRedis, stopProcess } from './private-redis.ts';
import { serverStorage, startServer, type ServerProcess } from './server-process.ts';

export interface TwoServersOnPrivateRedis {
  readonly redis: ChildProcess;
  readonly first: ServerProcess;
  readonly second: ServerProcess;
  /** What both servers run with (for the operator CLI too). */
  readonly env: Record<string, string>;
  /** Stops both servers, then Redis, then removes their storage. */
  stop(): Promise<void>;
}

/**
 * Two server processes on one storage (`serverStorage(prefix)`: one database, which PGlite cannot share, so a caller
 * needs TEST_DATABASE_URL) and a private Redis on a free port, with `env` on top. Started one after the other: the
 * first creates the schema. If a start fails, what did start is stopped and removed again.
 */
export async function startTwoServersOnPrivateRedis(
  prefix: string,
  env: Record<string, string>,
): Promise<TwoServersOnPrivateRedis> {
  const port = await freePort();
  const redis = await startPrivateRedis(port);
  let removeStorage: () => Promise<void> = async () => undefined;
  const servers: ServerProcess[] = [];
  const stop = async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await stopProcess(redis);
    await removeStorage();
  };
  try {
    const storage = await serverStorage(prefix);
    removeStorage = storage.remove;
    const serverEnv = { ...storage.env, REDIS_URL: `redis://127.0.0.1:${port}`, ...env };
    servers.push(await startServer(serverEnv));
    servers.push(await startServer(serverEnv));
    return { redis, first: servers[0]!, second: servers[1]!, env: serverEnv, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
