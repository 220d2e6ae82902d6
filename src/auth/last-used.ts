import type { Database } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import { recordLastUsed } from './api-key.repository.ts';

/**
 * Collects "key used at" times in memory and writes them in one statement per interval, so authenticating
 * a request never costs a database write.
 */
export class LastUsedTracker {
  private pending = new Map<string, Date>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly deps: { db: Database; logger: Logger; intervalMs: number }) {}

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.deps.intervalMs);
    this.timer.unref();
  }

  record(keyId: string, at = new Date()): void {
    this.pending.set(keyId, at);
  }

  /** The newest unflushed time for a key, so reads in this process are not behind. */
  peek(keyId: string): Date | undefined {
    return this.pending.get(keyId);
  }

  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.pending.size === 0) return;
      const batch = this.pending;
      this.pending = new Map();
      try {
        await recordLastUsed(
          this.deps.db,
          [...batch].map(([id, at]) => ({ id, at })),
        );
      } catch (error) {
        this.deps.logger.warn({ err: error }, 'could not record key last-used times; will retry');
        for (const [id, at] of batch) if (!this.pending.has(id)) this.pending.set(id, at);
      }
    });
    return this.flushing;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
