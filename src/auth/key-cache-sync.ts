import { randomUUID } from 'node:crypto';
import type { EventBus } from '../events/event-bus.ts';
import type { Logger } from '../logger.ts';
import type { KeyCache } from './key-cache.ts';

const TOPIC = 'lagoon:key-cache';

/**
 * Connects a process's key cache to the event bus: its invalidations are published, and those of every other
 * process are applied here. In-process (no REDIS_URL) there is no other process and this costs nothing.
 */
export function syncKeyCache(cache: KeyCache, events: EventBus, logger: Logger): void {
  if (events.kind === 'memory') return;
  const origin = randomUUID();
  cache.broadcast = (invalidation) => events.publish(TOPIC, 'all', { ...invalidation, origin });
  const subscription = events.subscribe(TOPIC, 'all');
  void (async () => {
    try {
      for await (const { origin: from, ...invalidation } of subscription) {
        if (from !== origin) cache.apply('hash' in invalidation ? { hash: invalidation.hash } : { keyId: invalidation.keyId });
      }
    } catch (error) {
      logger.error({ err: error }, 'key cache invalidations stopped; revoked keys now expire with the cache TTL');
    }
  })();
}
