/**
 * A first-come, first-served limit on how many calls run a section at once; the others wait their turn (or give
 * up when their signal aborts). Image work holds decoded pictures of tens of megabytes: bounding how many are in
 * flight bounds the process's memory, whatever the number of concurrent requests.
 */
export class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  /** `hooks` hear each call start its work and end it (picture-priority.ts watches the work in flight). */
  constructor(
    size: number,
    private readonly hooks: { readonly started?: () => void; readonly ended?: () => void } = {},
  ) {
    this.free = Math.max(1, size);
  }

  async run<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.acquire(signal);
    let started = false;
    try {
      const running = work();
      this.hooks.started?.();
      started = true;
      return await running;
    } finally {
      if (started) this.hooks.ended?.();
      this.release();
    }
  }

  private acquire(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (this.free > 0) {
      this.free -= 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const turn = () => {
        signal?.removeEventListener('abort', leave);
        resolve();
      };
      const leave = () => {
        const index = this.waiting.indexOf(turn);
        if (index !== -1) this.waiting.splice(index, 1);
        reject(signal?.reason);
      };
      this.waiting.push(turn);
      signal?.addEventListener('abort', leave, { once: true });
    });
  }

  private release(): void {
    const next = this.waiting.shift();
    // The slot passes straight to the next caller.
    if (next) next();
    else this.free += 1;
  }
}
