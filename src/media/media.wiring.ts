import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import { MediaLinks } from './media-links.ts';
import { MediaStore } from './media-store.ts';
import type { BlobStore } from './storage/blob-store.ts';
import { LocalBlobStore } from './storage/local-blob-store.ts';
import { S3BlobStore } from './storage/s3-blob-store.ts';

/** How often expired media (and cloned voices, src/services.ts) are deleted without a config: LAGOON_MEDIA_SWEEP_SECONDS' default. */
export const DEFAULT_MEDIA_SWEEP_MS = 300_000;

/** Defaults for a wiring without a config (tests building services directly): the env defaults of src/config.ts. */
const DEFAULTS: Config['media'] = {
  secret: undefined,
  urlTtlMs: 3_600_000,
  publicUrl: undefined,
  sweepIntervalMs: DEFAULT_MEDIA_SWEEP_MS,
  // Except the storage: without a config the bytes stay in the database, so such a wiring writes no files.
  storage: { kind: 'database', dir: '.lagoon/media', s3: undefined, presignedUrls: false },
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
  /** The objects (table media_objects, their bytes in the configured store); close() on stop. */
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
  const store = new MediaStore({ db: deps.db, logger: deps.logger, ...createBlobStores(options.storage) });
  const links = new MediaLinks({
    db: deps.db,
    store,
    options: {
      secret: options.secret,
      ttlMs: options.urlTtlMs,
      publicUrl: options.publicUrl,
      presigned: options.storage.presignedUrls,
    },
  });
  const sweeper = new MediaSweeper({ store, logger: deps.logger, intervalMs: options.sweepIntervalMs });
  return { store, links, sweeper };
}

/**
 * The store new media goes to, and the others configured, still read: objects written before the operator moved
 * from the directory to a bucket (or back) are served and deleted where they are.
 */
export function createBlobStores(storage: Config['media']['storage']): { blobs?: BlobStore; others: BlobStore[] } {
  const local = new LocalBlobStore(storage.dir);
  const s3 = storage.s3 && new S3BlobStore(storage.s3);
  if (storage.kind === 's3' && s3) return { blobs: s3, others: [local] };
  const others = s3 ? [s3] : [];
  return storage.kind === 'local' ? { blobs: local, others } : { others: [local, ...others] };
}
