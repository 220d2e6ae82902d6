import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnalyticsService, ANALYTICS_CACHE_TTL_MS, createAnalyticsCache } from '../../src/billing/analytics.service.ts';
import { parseNano } from '../../src/billing/money.ts';
import { USAGE_TOPIC } from '../../src/billing/usage-events.ts';
import { createEventBus } from '../../src/events/event-bus.ts';
import { createLogger } from '../../src/logger.ts';
import type { Services } from '../../src/services.ts';
import { createTestDatabase, testDatabaseKind } from '../helpers/db.ts';
import { createAccountWithKey, createTestServices } from '../helpers/services.ts';

const REDIS_URL = process.env.REDIS_URL || undefined;
const mode = REDIS_URL ? 'redis' : 'memory';
const logger = createLogger('silent');

describe(`Analytics cache and event bus (${testDatabaseKind}, ${mode})`, () => {
  let handle: Awaited<ReturnType<typeof createTestDatabase>>;
  let services: Services;
  let redis: Redis | undefined;

  beforeAll(async () => {
    handle = await createTestDatabase();
    services = createTestServices(handle.db);
    redis = REDIS_URL ? new Redis(REDIS_URL) : undefined;
  });
  afterAll(async () => {
    await redis?.quit();
    await handle.drop();
  });

  const charge = async (auth: Awaited<ReturnType<typeof createAccountWithKey>>['auth'], usd: string) =>
    services.billing.runMetered(auth, {
      maxCost: { usd: parseNano(usd), diem: parseNano(usd) },
      run: async () => undefined,
      usage: () => ({
        modelId: 'cache-model',
        modelType: 'LLM',
        unitType: 'tokens',
        lines: [
          { sku: 'cache-sku', units: '1', pricePerUnitUsd: usd, cost: { usd: parseNano(usd), diem: parseNano(usd) } },
        ],
      }),
    });

  it(`should cache analytics for 10 minutes and then recompute (${mode})`, async () => {
    const { auth, accountId } = await createAccountWithKey(services, { credit: { USD: '10' } });
    let now = Date.now();
    const cache = createAnalyticsCache({ redisUrl: REDIS_URL, logger, now: () => now });
    expect(cache.kind).toBe(mode);
    // With Redis the server's clock expires entries, so the test shortens the TTL instead of moving a fake clock.
    const ttlMs = REDIS_URL ? 300 : ANALYTICS_CACHE_TTL_MS;
    const analytics = new AnalyticsService({ db: handle.db, cache, ttlMs, settled: services.billing });
    try {
      await charge(auth, '0.25');
      const first = await analytics.analytics(auth, { lookback: '1d' });
      expect(first.byModel[0]?.usd).toBe(parseNano('0.25'));
      if (redis) {
        const ttl = await redis.pttl(`lagoon:analytics:${accountId}:1d:${first.startDay}:${first.endDay}`);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(ttlMs);
      }
      await charge(auth, '0.5');
      expect((await analytics.analytics(auth, { lookback: '1d' })).byModel[0]?.usd).toBe(parseNano('0.25'));
      if (REDIS_URL) await new Promise((resolve) => setTimeout(resolve, ttlMs + 50));
      else now += ANALYTICS_CACHE_TTL_MS - 1;
      if (!REDIS_URL)
        expect((await analytics.analytics(auth, { lookback: '1d' })).byModel[0]?.usd).toBe(parseNano('0.25'));
      now += 1;
      expect((await analytics.analytics(auth, { lookback: '1d' })).byModel[0]?.usd).toBe(parseNano('0.75'));
    } finally {
      await analytics.close();
    }
  });

  it(`should share cached analytics between processes only through Redis (${mode})`, async () => {
    const { auth } = await createAccountWithKey(services, { credit: { USD: '10' } });
    const one = new AnalyticsService({
      db: handle.db,
      cache: createAnalyticsCache({ redisUrl: REDIS_URL, logger }),
      settled: services.billing,
    });
    const two = new AnalyticsService({
      db: handle.db,
      cache: createAnalyticsCache({ redisUrl: REDIS_URL, logger }),
      settled: services.billing,
    });
    try {
      await charge(auth, '1');
      await one.analytics(auth, { lookback: '2d' });
      await charge(auth, '2');
      const seenByTwo = await two.analytics(auth, { lookback: '2d' });
      // Another process sees the first one's cached result with Redis, and computes its own without.
      expect(seenByTwo.byModel[0]?.usd).toBe(parseNano(REDIS_URL ? '1' : '3'));
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it('should deliver an account’s usage entries to its subscribers after the settlement commits', async () => {
    expect(services.events.kind).toBe('memory'); // test services never get REDIS_URL
    const { auth, accountId } = await createAccountWithKey(services, { credit: { USD: '10' } });
    const other = await createAccountWithKey(services, { credit: { USD: '10' } });
    const events = services.usage.subscribe(auth);
    const next = events.next();
    await charge(other.auth, '0.01'); // another account: not delivered
    const { charge: settled } = await charge(auth, '0.02');
    const received = await next;
    expect(received.done).toBe(false);
    expect(received.value).toMatchObject({
      id: settled.usageEntryIds[0],
      accountId,
      amount: -parseNano('0.02'),
      currency: 'USD',
      sku: 'cache-sku',
    });
    await events.return?.();
  });

  it(`should carry events between buses (processes) only through Redis (${mode})`, async () => {
    const publisher = createEventBus({ redisUrl: REDIS_URL, logger });
    const subscriber = createEventBus({ redisUrl: REDIS_URL, logger });
    expect([publisher.kind, subscriber.kind]).toEqual([mode, mode]);
    try {
      const remote = subscriber.subscribe(USAGE_TOPIC, 'account-1');
      const local = publisher.subscribe(USAGE_TOPIC, 'account-1');
      const remoteNext = remote.next();
      const localNext = local.next();
      // Redis SUBSCRIBE is asynchronous: publish until the subscriber is listening.
      let delivered: unknown;
      void remoteNext.then((value) => (delivered = value));
      for (let attempt = 0; attempt < (REDIS_URL ? 50 : 1); attempt += 1) {
        publisher.publish(USAGE_TOPIC, 'account-1', { entries: [] });
        await new Promise((resolve) => setTimeout(resolve, REDIS_URL ? 50 : 20));
        if (delivered) break;
      }
      expect(await localNext).toEqual({ done: false, value: { entries: [] } });
      if (REDIS_URL) expect(delivered).toEqual({ done: false, value: { entries: [] } });
      else expect(delivered).toBeUndefined();
      await Promise.all([remote.return?.(), local.return?.()]);
    } finally {
      await Promise.all([publisher.close(), subscriber.close()]);
    }
  });
});
