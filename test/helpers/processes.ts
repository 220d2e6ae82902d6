import { afterAll, beforeAll } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { testLogger } from './test-logs.ts';
import { createServices, type Services } from '../../src/services.ts';
import { createTestDatabase } from './db.ts';
import { testServiceOptions } from './services.ts';

/**
 * Two sets of services on one fresh database, standing for two API processes that REDIS_URL connects (event bus,
 * caches, leases). Call it in a describe block: it sets them up before the block's tests and closes them after.
 */
export function twoProcesses(redisUrl: string | undefined): { first: Services; second: Services; db: Database } {
  const pair = {} as { first: Services; second: Services; db: Database };
  let drop: () => Promise<void> = async () => undefined;
  beforeAll(async () => {
    const handle = await createTestDatabase();
    drop = handle.drop;
    const options = { ...testServiceOptions, redisUrl };
    pair.db = handle.db;
    pair.first = createServices(handle.db, testLogger(), options);
    pair.second = createServices(handle.db, testLogger(), options);
  });
  afterAll(async () => {
    await Promise.all([pair.first.stop(), pair.second.stop()]);
    await drop();
  });
  return pair;
}
