/**
 * Per-process health of the upstreams of one router (chat providers, search upstreams, JSON-RPC nodes): an
 * upstream whose calls failed `failuresBeforeCooldown` times in a row cools down for a while, and callers put it
 * last or skip it. A success forgets its failures. Health is only an optimisation of the order of attempts.
 */
export class UpstreamHealth {
  private readonly entries = new Map<string, { failures: number; coolUntil: number }>();

  constructor(
    private readonly options: {
      readonly failuresBeforeCooldown: number;
      /** Count failures from zero again once a cooldown starts (else each later failure restarts the cooldown). */
      readonly restartCountAfterCooldown?: boolean;
    },
    private readonly now: () => number = Date.now,
  ) {}

  cooling(id: string, at: number = this.now()): boolean {
    return (this.entries.get(id)?.coolUntil ?? 0) > at;
  }

  /** The healthy ones in their order, then those cooling down (never dropped: a lone upstream still gets every call). */
  healthyFirst<T>(items: readonly T[], idOf: (item: T) => string): T[] {
    if (this.entries.size === 0) return [...items];
    const now = this.now();
    return [
      ...items.filter((item) => !this.cooling(idOf(item), now)),
      ...items.filter((item) => this.cooling(idOf(item), now)),
    ];
  }

  succeeded(id: string): void {
    this.entries.delete(id);
  }

  /** Records a failed call; true when it started a cooldown. */
  failed(id: string, cooldownMs: number): boolean {
    const entry = this.entries.get(id) ?? { failures: 0, coolUntil: 0 };
    entry.failures += 1;
    const cools = entry.failures >= this.options.failuresBeforeCooldown;
    if (cools) {
      entry.coolUntil = this.now() + cooldownMs;
      if (this.options.restartCountAfterCooldown) entry.failures = 0;
    }
    this.entries.set(id, entry);
    return cools;
  }
}
