import type { Logger } from './logger.ts';

/** Something a process runs in the background or holds open: a timer, a pool, connections. */
export interface LifecyclePart {
  start?(): void | Promise<void>;
  /**
   * Started without being waited for (the process answers meanwhile). A failure is logged, unless the process's
   * stop cut the start short (a server stopped in its first second): that is not a failure.
   */
  startInBackground?(): Promise<void>;
  stop?(): void | Promise<void>;
}

/**
 * The one place a process's background work starts and stops. Parts start in the order they were added and stop
 * in the reverse order, so a part added after the things it uses stops before them (pending charges are written
 * before the event bus closes, and everything stops before the database). A part that fails to stop is logged and
 * the rest still stop.
 */
export class Lifecycle {
  private readonly parts: { readonly name: string; readonly part: LifecyclePart }[] = [];
  private stopping: Promise<void> | undefined;

  constructor(private readonly logger: Logger) {}

  add(name: string, part: LifecyclePart): void {
    this.parts.push({ name, part });
  }

  async start(): Promise<void> {
    for (const { name, part } of this.parts) {
      part.startInBackground?.().catch((error: unknown) => {
        if (!this.stopping) this.logger.error({ err: error, part: name }, `${name} failed to start`);
      });
      await part.start?.();
    }
  }

  /** Idempotent: every caller waits for the same stop. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      for (const { name, part } of [...this.parts].reverse()) {
        try {
          await part.stop?.();
        } catch (error) {
          this.logger.error({ err: error, part: name }, 'a background part failed to stop');
        }
      }
    })();
    return this.stopping;
  }
}

/** A task run every `intervalMs` while started; a failed run is logged and the next one runs on time. */
export function periodic(run: () => Promise<unknown>, intervalMs: number, logger: Logger, what: string): LifecyclePart {
  let timer: NodeJS.Timeout | undefined;
  return {
    start() {
      timer ??= setInterval(() => {
        run().catch((error: unknown) => logger.error({ err: error }, `${what} failed`));
      }, intervalMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}
