import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { createPubSub, SlidingBuffer, type PubSubEvent, type PubSubEventTarget } from '@graphql-yoga/subscription';
import type { KeyInvalidation } from '../auth/key-cache.ts';
import type { UsageSettledEvent } from '../billing/usage.types.ts';
import type { Logger } from '../logger.ts';
import { closeRedisClient, createRedisClient } from './redis.ts';

/** Topics and their payloads (JSON-safe: with Redis they cross processes as JSON). Each is routed by an id. */
// A type alias (not an interface) so that it satisfies createPubSub's index-signature constraint.
export type EventTopics = {
  /** New usage entries of an account, after their settlement committed (id: the account id). */
  'lagoon:usage': [accountId: string, event: UsageSettledEvent];
  /**
   * A revoked or edited API key, for every process's key cache, or a process's probe of the channel, which only
   * it listens for (id: always `all`).
   */
  'lagoon:key-cache': [
    scope: 'all',
    message: (KeyInvalidation | { readonly probe: string }) & { readonly origin: string },
  ];
  /** A process asks the others to give back the unused part of their balance leases on an account (id: always `all`). */
  'lagoon:lease-reclaim': [scope: 'all', request: { readonly accountId: string; readonly origin: string }];
  /** A queued job changed status or progress (id: the job id); subscribers read the row again for the rest. */
  'lagoon:job': [jobId: string, event: { readonly status: string; readonly progress: number }];
  /** A wallet's credit changed other than by a charge (a top-up, a refund; id: the account id). */
  'lagoon:wallet': [accountId: string, event: { readonly changedAt: number }];
};

type Topic = Extract<keyof EventTopics, string>;

/**
 * Domain events between services and live subscriptions: in-process by default, through Redis pub/sub when
 * REDIS_URL is set, so that an event published by any API or worker process reaches subscribers on all of them.
 */
export interface EventBus {
  readonly kind: 'memory' | 'redis';
  publish<T extends Topic>(topic: T, id: EventTopics[T][0], payload: EventTopics[T][1]): void;
  /** Events of one topic and id until the iterator is returned (a client disconnect does that). */
  subscribe<T extends Topic>(topic: T, id: EventTopics[T][0]): AsyncIterableIterator<EventTopics[T][1]>;
  /**
   * Hears when a Redis connection of the bus is lost (false: events may be missed from now on) or established
   * again (true: events flow again once the subscriptions are renewed). In-process it is never called.
   */
  onConnection(listener: (up: boolean) => void): void;
  close(): Promise<void>;
}

/** Events one subscriber may fall behind by; past that its oldest are dropped (never an overflow error). */
const SUBSCRIBER_BUFFER = 1000;

export function createEventBus(options: {
  redisUrl?: string | undefined;
  logger: Logger;
  /** Each Redis command's timeout (LAGOON_REDIS_TIMEOUT_MS). */
  timeoutMs?: number | undefined;
}): EventBus {
  if (!options.redisUrl)
    return wrap(
      'memory',
      new EventTarget() as PubSubEventTarget<EventTopics>,
      async () => undefined,
      () => undefined,
    );
  const commandTimeoutMs = options.timeoutMs;
  const publishClient = createRedisClient(options.redisUrl, options.logger, 'publish', { commandTimeoutMs });
  const subscribeClient = createRedisClient(options.redisUrl, options.logger, 'subscribe', {
    commandTimeoutMs,
    subscriber: true,
  });
  const eventTarget = createRedisEventTarget<PubSubEvent<EventTopics, Topic>>({ publishClient, subscribeClient });
  const onConnection = (listener: (up: boolean) => void) => {
    for (const client of [publishClient, subscribeClient]) {
      client.on('close', () => listener(false));
      client.on('ready', () => listener(true));
    }
  };
  return wrap(
    'redis',
    eventTarget,
    async () => {
      await Promise.all([closeRedisClient(publishClient), closeRedisClient(subscribeClient)]);
    },
    onConnection,
  );
}

function wrap(
  kind: EventBus['kind'],
  eventTarget: PubSubEventTarget<EventTopics>,
  close: () => Promise<void>,
  onConnection: EventBus['onConnection'],
): EventBus {
  const publisher = createPubSub<EventTopics>({ eventTarget });
  let closed = false;
  return {
    kind,
    onConnection,
    publish(topic, id, payload) {
      // Every topic is (id, payload); TypeScript cannot see that through the generic, hence the widened call.
      const publish = publisher.publish as (topic: Topic, id: string, payload: EventTopics[Topic][1]) => void;
      if (!closed) publish(topic, id, payload);
    },
    subscribe(topic, id) {
      // A pub/sub per subscription: createPubSub hands its buffer to every subscription it makes, and a buffer
      // must not be shared. Every topic carries a payload, so the (topic, id) form applies.
      const pubsub = createPubSub<EventTopics>({ eventTarget, repeaterBuffer: new SlidingBuffer(SUBSCRIBER_BUFFER) });
      const subscribe = pubsub.subscribe as (topic: Topic, id: string) => AsyncIterable<EventTopics[typeof topic][1]>;
      return subscribe(topic, id)[Symbol.asyncIterator]() as AsyncIterableIterator<EventTopics[typeof topic][1]>;
    },
    async close() {
      if (closed) return;
      closed = true;
      await close();
    },
  };
}
