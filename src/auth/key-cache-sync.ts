import { randomUUID } from 'node:crypto';
import type { EventBus } from '../events/event-bus.ts';
import { DEFAULT_REDIS_TIMEOUT_MS } from '../events/redis.ts';
import type { Logger } from '../logger.ts';
import type { KeyCache, KeyInvalidation, KeyInvalidationChannel } from './key-cache.ts';

const TOPIC = 'lagoon:key-cache';

export interface KeyCacheSyncTiming {
  /** While invalidations may be missed, a cached lookup is used at most this long. */
  readonly degradedMaxAgeMs: number;
  /** How often a healthy channel is probed (a half-open connection closes nothing). */
  readonly probeIntervalMs: number;
  /** A probe not back within this marks the channel down; a down channel is probed again at this pace. */
  readonly probeTimeoutMs: number;
  /** Invalidations this recent are sent again when the channel comes back (another process may have missed them). */
  readonly resendWindowMs: number;
}

/**
 * The timing for a Redis timeout of `redisTimeoutMs` (LAGOON_REDIS_TIMEOUT_MS, default 500 ms): the channel is probed
 * at that pace and a probe gets that long to come back, so a Redis that hangs without closing its connections is
 * noticed within twice the timeout (1 s), about as soon as one that closes them, and the cache falls back the same
 * way. A probe is one small PUBLISH every half second per process.
 */
export function keyCacheSyncTiming(redisTimeoutMs = DEFAULT_REDIS_TIMEOUT_MS): KeyCacheSyncTiming {
  return {
    degradedMaxAgeMs: 1_000,
    probeIntervalMs: redisTimeoutMs,
    probeTimeoutMs: redisTimeoutMs,
    resendWindowMs: 60_000,
  };
}

export const DEFAULT_KEY_CACHE_SYNC_TIMING: KeyCacheSyncTiming = keyCacheSyncTiming();

/**
 * The channel between a process's key cache and the event bus: its invalidations are published, and those of every
 * other process are applied here. In-process (no REDIS_URL) there is no other process: no channel.
 *
 * The cache may keep a key for its full TTL only while this process is sure to hear revocations: from the moment
 * a Redis connection drops (or a probe of the channel goes unanswered) until a probe this process published comes
 * back through its own subscription, lookups are cached at most `degradedMaxAgeMs`. When the probe comes back the
 * whole cache is dropped (revocations may have been missed meanwhile) and recent invalidations are sent again.
 */
export function keyCacheChannel(
  events: EventBus,
  logger: Logger,
  timing: KeyCacheSyncTiming = DEFAULT_KEY_CACHE_SYNC_TIMING,
): KeyInvalidationChannel | undefined {
  if (events.kind === 'memory') return undefined;
  const origin = randomUUID();
  const recent: { readonly invalidation: KeyInvalidation; readonly at: number }[] = [];
  return {
    publish(invalidation) {
      const now = Date.now();
      while (recent.length > 0 && (recent[0]!.at < now - timing.resendWindowMs || recent.length >= 10_000))
        recent.shift();
      recent.push({ invalidation, at: now });
      events.publish(TOPIC, 'all', { ...invalidation, origin });
    },
    attach: (cache) => watch(cache, { events, logger, timing, origin, recent }),
  };
}

function watch(
  cache: KeyCache,
  deps: {
    events: EventBus;
    logger: Logger;
    timing: KeyCacheSyncTiming;
    origin: string;
    recent: readonly { readonly invalidation: KeyInvalidation; readonly at: number }[];
  },
): void {
  const { events, logger, timing, origin, recent } = deps;
  let healthy = false;
  let pending: string | undefined;
  let timer: NodeJS.Timeout | undefined;

  // Not sure of the channel until the first probe comes back.
  cache.limitAge(timing.degradedMaxAgeMs);

  const degrade = (reason: string) => {
    if (healthy)
      logger.warn(
        { reason },
        `key cache invalidations may be missed; caching key lookups at most ${timing.degradedMaxAgeMs} ms until Redis answers`,
      );
    healthy = false;
    cache.limitAge(timing.degradedMaxAgeMs);
  };
  const recover = () => {
    healthy = true;
    cache.clear();
    cache.limitAge(undefined);
    const since = Date.now() - timing.resendWindowMs;
    for (const { invalidation } of recent.filter((entry) => entry.at >= since))
      events.publish(TOPIC, 'all', { ...invalidation, origin });
    logger.info('key cache invalidations flow again; the cache was emptied');
  };
  const schedule = (ms: number, run: () => void) => {
    clearTimeout(timer);
    timer = setTimeout(run, ms);
    timer.unref();
  };
  const probe = () => {
    const nonce = randomUUID();
    pending = nonce;
    events.publish(TOPIC, 'all', { probe: nonce, origin });
    schedule(timing.probeTimeoutMs, () => {
      // Timers run before pending socket reads: after a busy stretch of this process the answer may be waiting
      // unread. Looked at once those reads are done (setImmediate), so a slow process is not taken for a hung Redis.
      setImmediate(() => {
        if (pending !== nonce) return;
        degrade('a probe of the channel went unanswered');
        probe();
      });
    });
  };
  const answered = (nonce: string) => {
    if (nonce !== pending) return;
    pending = undefined;
    if (!healthy) recover();
    schedule(timing.probeIntervalMs, probe);
  };

  events.onConnection((up) => {
    if (up) probe();
    else degrade('a Redis connection closed');
  });

  const subscription = events.subscribe(TOPIC, 'all');
  void (async () => {
    try {
      for await (const message of subscription) {
        if ('probe' in message) {
          if (message.origin === origin) answered(message.probe);
        } else if (message.origin !== origin) {
          cache.apply('hash' in message ? { hash: message.hash } : { keyId: message.keyId });
        }
      }
    } catch (error) {
      degrade('the subscription ended');
      logger.error({ err: error }, 'key cache invalidations stopped; key lookups are cached at most briefly');
    }
  })();
  probe();
}
