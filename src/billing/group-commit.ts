/** What a batch did for one of its items: a value, or the error that item alone failed with. */
export type ItemOutcome<Result> =
  { readonly ok: true; readonly value: Result } | { readonly ok: false; readonly error: unknown };

interface Waiting<Item, Result> {
  readonly item: Item;
  readonly resolve: (value: Result) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Group commit per key. Items for a key run in batches, one batch at a time; items submitted while a batch runs
 * wait and go together in the next one. Alone, an item runs at once in a batch of one; under load the batches grow,
 * so one transaction (one lock wait, one WAL flush) serves many items. Serialising a key costs nothing extra when
 * the key stands for rows that every item locks anyway (an account's balance rows).
 */
export class GroupCommitQueue<Item, Result> {
  private readonly queues = new Map<string, Waiting<Item, Result>[]>();

  /** `execute` returns one outcome per item, in order; if it throws, every item of the batch fails with that error. */
  constructor(
    private readonly execute: (key: string, items: readonly Item[]) => Promise<readonly ItemOutcome<Result>[]>,
    private readonly maxBatch = 64,
  ) {}

  submit(key: string, item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      const queue = this.queues.get(key);
      if (queue) {
        queue.push({ item, resolve, reject });
        return;
      }
      this.queues.set(key, [{ item, resolve, reject }]);
      // Started on the next microtask so that items submitted in the same tick share the first batch.
      queueMicrotask(() => void this.drain(key));
    });
  }

  /** Keys with items queued or running (for tests and shutdown). */
  get activeKeys(): number {
    return this.queues.size;
  }

  private async drain(key: string): Promise<void> {
    for (;;) {
      const queue = this.queues.get(key);
      if (!queue || queue.length === 0) {
        this.queues.delete(key);
        return;
      }
      const batch = queue.splice(0, this.maxBatch);
      try {
        const outcomes = await this.execute(
          key,
          batch.map((waiting) => waiting.item),
        );
        batch.forEach((waiting, index) => {
          const outcome = outcomes[index];
          if (outcome?.ok) waiting.resolve(outcome.value);
          else waiting.reject(outcome ? outcome.error : new Error('The batch returned no outcome for this item'));
        });
      } catch (error) {
        for (const waiting of batch) waiting.reject(error);
      }
    }
  }
}
