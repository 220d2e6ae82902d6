import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import { MediaLinks } from './media-links.ts';
import { MediaStore } from './media-store.ts';

/** Defaults for a wiring without a config (tests building services directly): the env defaults of src/config.ts. */
const DEFAULTS: Config['media'] = {
  secret: undefined,
  urlTtlMs: 3_600_000,
  publicUrl: undefined,
  sweepIntervalMs: 300_000,
};

/** Deletes expired media every interval; the app starts it with the other background tasks and stops it on close. */
export class MediaSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly deps: { store: MediaStore; logger: Logger; intervalMs: number }) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.sweepOnce(), this.deps.intervalMs);
    this.timer.unref();
  }

  /** One pass (also run by start's timer): deletes in batches until nothing expired is left. */
  sweepOnce(now: Date = new Date()): Promise<void> {
    this.running ??= (async () => {
      try {
        let deleted = 0;
        for (
          let batch = await this.deps.store.sweepExpired(now);
          batch > 0;
          batch = await this.deps.store.sweepExpired(now)
        )
          deleted += batch;
        if (deleted > 0) this.deps.logger.debug({ deleted }, 'expired media deleted');
      } catch (error) {
        this.deps.logger.error({ err: error }, 'media sweep failed');
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  /** Stops the timer and waits for a pass in progress (before the database closes). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}

export interface MediaKit {
  /** The objects (table media_objects). */
  readonly store: MediaStore;
  /** Signed URLs for them (`GET /media/<token>`, rest/routes/media.ts). */
  readonly links: MediaLinks;
  /** Expired objects' deletion: start() with the app's background tasks, stop() on close. */
  readonly sweeper: MediaSweeper;
}

export function createMediaKit(deps: {
  db: Database;
  logger: Logger;
  options?: Config['media'] | undefined;
}): MediaKit {
  const options = deps.options ?? DEFAULTS;
  const store = new MediaStore({ db: deps.db });
  const links = new MediaLinks({
    db: deps.db,
    store,
    options: { secret: options.secret, ttlMs: options.urlTtlMs, publicUrl: options.publicUrl },
  });
  const sweeper = new MediaSweeper({ store, logger: deps.logger, intervalMs: options.sweepIntervalMs });
  return { store, links, sweeper };
}
