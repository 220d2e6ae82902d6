import { describe, expect, it } from 'vitest';
import type { AuthenticatedKey } from '../../src/auth/auth-context.ts';
import { KeyCache } from '../../src/auth/key-cache.ts';
import { keyCacheChannel, type KeyCacheSyncTiming } from '../../src/auth/key-cache-sync.ts';
import type { EventBus, EventTopics } from '../../src/events/event-bus.ts';
import { createLogger } from '../../src/logger.ts';
import { eventually } from '../helpers/eventually.ts';

type Message = EventTopics['lagoon:key-cache'][1];

/** The key-cache topic of a Redis event bus whose connection the test cuts and restores; messages sent while cut are lost. */
function fakeRedisBus() {
  let up = true;
  let listener: (up: boolean) => void = () => undefined;
  const queue: Message[] = [];
  let wake: (() => void) | undefined;
  const sent: Message[] = [];
  const bus = {
    kind: 'redis',
    publish(_topic: string, _id: string, message: Message) {
      sent.push(message);
      if (!up) return;
      queue.push(message);
      wake?.();
    },
    subscribe() {
      return (async function* () {
        for (;;) {
          while (queue.length > 0) yield queue.shift()!;
          await new Promise<void>((resolve) => (wake = resolve));
        }
      })();
    },
    onConnection(l: (up: boolean) => void) {
      listener = l;
    },
    close: async () => undefined,
  } as unknown as EventBus;
  return {
    bus,
    sent,
    setUp(value: boolean) {
      up = value;
      listener(value);
    },
  };
}

const TIMING: KeyCacheSyncTiming = {
  degradedMaxAgeMs: 1_000,
  probeIntervalMs: 60_000,
  probeTimeoutMs: 200,
  resendWindowMs: 60_000,
};
const key = (id: string) =>
  ({
    id,
    accountId: 'a',
    type: 'INFERENCE',
    limitPeriod: 'MONTHLY',
    modelPrivacy: 'ANY',
    limits: { usd: null, diem: null },
    expiresAt: null,
  }) as unknown as AuthenticatedKey;

describe('key cache with its invalidation channel down', () => {
  it('should keep lookups at most a second while the channel is down, and drop the whole cache when it is back', async () => {
    let now = 0;
    const changed: string[] = [];
    const redis = fakeRedisBus();
    const cache = new KeyCache({
      ttlMs: 30_000,
      maxEntries: 1_000,
      now: () => now,
      channel: keyCacheChannel(redis.bus, createLogger('silent'), TIMING),
      onKeyChanged: (keyId) => changed.push(keyId),
    });
    // Healthy once its own probe came back: a lookup lives its full TTL.
    await eventually(async () => {
      cache.set('h1', key('k1'));
      now += 5_000;
      expect(cache.get('h1')?.id).toBe('k1');
    });

    redis.setUp(false);
    expect(cache.get('h1'), 'a lookup older than a second is checked again').toBeUndefined();
    cache.set('h2', key('k2'));
    now += 500;
    expect(cache.get('h2')?.id).toBe('k2');
    now += 600;
    expect(cache.get('h2')).toBeUndefined();
    cache.set('h3', key('k3'));
    cache.invalidateKeyId('k9');

    redis.setUp(true);
    // Back: everything cached meanwhile is dropped (revocations may have been missed), and the invalidation made
    // while the channel was down is sent again.
    await eventually(async () => expect(cache.get('h3')).toBeUndefined());
    expect(changed).toContain('k3');
    expect(redis.sent.filter((message) => 'keyId' in message && message.keyId === 'k9')).toHaveLength(2);
    cache.set('h4', key('k4'));
    now += 20_000;
    expect(cache.get('h4')?.id).toBe('k4');
  });

  it('should treat an unanswered probe as a channel that is down', async () => {
    let now = 0;
    const redis = fakeRedisBus();
    const cache = new KeyCache({
      ttlMs: 30_000,
      maxEntries: 1_000,
      now: () => now,
      channel: keyCacheChannel(redis.bus, createLogger('silent'), { ...TIMING, probeIntervalMs: 50 }),
    });
    await eventually(async () => {
      cache.set('h1', key('k1'));
      now += 5_000;
      expect(cache.get('h1')?.id).toBe('k1');
    });
    // Messages stop arriving without any connection event (a half-open connection).
    redis.bus.onConnection(() => undefined);
    redis.setUp(false);
    cache.set('h2', key('k2'));
    await eventually(async () => {
      now += 2_000;
      cache.set('h2', key('k2'));
      now += 1_500;
      expect(cache.get('h2')).toBeUndefined();
    });
  });
});
