import { availableParallelism } from 'node:os';
import type { ProviderConfig } from '../../operator-config/schema.ts';
import type { Logger } from '../../logger.ts';
import { configurePictureThread } from '../../providers/image/picture-thread.ts';
import type { BackgroundPriority } from '../../thread-priority.ts';
import { PicturePriority, type StarvationRule } from './picture-priority.ts';
import { configureSharp } from './sharp-module.ts';
import { Slots } from './slots.ts';

/*
 * How much CPU picture work may take in one process. libvips runs outside the event loop, but on the same cores:
 * eight pictures decoded and encoded at once on a 2-core host leave chat's requests no core to run on. So pictures
 * are worked on a few at a time (a Slots queue shared by generation, edits and upscales) and libvips gets as many
 * threads per picture; by default one core fewer than the host has, at least 1 (LAGOON_IMAGE_THREADS). libvips'
 * threads also run below the event loop's priority, by default on idle cycles only (LAGOON_IMAGE_PRIORITY,
 * src/thread-priority.ts), so requests go first on busy cores; picture-priority.ts raises them while they starve.
 */

/** Pictures worked on at once, and libvips threads per picture: `configured`, or cores − 1 (min 1) when 0. */
export function imageThreads(configured = 0): number {
  return configured > 0 ? configured : Math.max(1, availableParallelism() - 1);
}

/**
 * Sets libvips up for this process (its settings are process-wide) and answers the queue pixel work waits in.
 * The operation cache is off: every request's pictures are new, so cached ones only hold memory.
 */
export function createPixelWork(
  threads: number,
  background: BackgroundPriority = 'idle',
  logger?: Logger,
  starvation?: StarvationRule,
): Slots {
  configureSharp(threads);
  configurePictureThread({ priority: background, logger });
  const priority = new PicturePriority(background, logger, starvation);
  return new Slots(threads, { started: () => priority.started(), ended: () => priority.ended() });
}

/** Providers whose engine runs in this process (the built-in simulator): their whole call is pixel work. */
export function localImageProviders(providers: readonly ProviderConfig[] | undefined): ReadonlySet<string> {
  return new Set(
    (providers ?? [])
      .filter((provider) => provider.type === 'simulator')
      .map((provider) => provider.id)
      .concat('simulator'),
  );
}
