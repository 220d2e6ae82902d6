import type { UpstreamMetrics, UpstreamOutcome } from './upstream-pool.ts';

/** How many recent latencies and errors are kept per provider. */
const RECENT = 20;

export interface UpstreamErrorRecord {
  readonly at: Date;
  readonly operation: string;
  readonly outcome: UpstreamOutcome;
  readonly message: string;
}

/** One provider's health as this process saw it (read-only copy). */
export interface UpstreamHealthSnapshot {
  readonly providerId: string;
  readonly coolingDownUntil: Date | null;
  readonly calls: number;
  readonly failures: number;
  /** The mean and the last duration of the recent successful calls, in milliseconds (null: none yet). */
  readonly recentLatencyMs: number | null;
  readonly lastLatencyMs: number | null;
  readonly recentErrors: readonly UpstreamErrorRecord[];
}

interface Entry {
  calls: number;
  failures: number;
  coolUntil: number;
  latencies: number[];
  errors: UpstreamErrorRecord[];
}

/**
 * Upstream metrics that also remember, per provider, the recent latencies, errors and cooldowns every pool of this
 * process reports (src/providers/upstream-pool.ts), for the operator's health view; forwards to the app's metrics.
 */
export class UpstreamActivity implements UpstreamMetrics {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly inner?: UpstreamMetrics,
    private readonly now: () => number = Date.now,
  ) {}

  /** Providers configured but not called yet are listed too (healthy, no latency). */
  known(providerIds: Iterable<string>): void {
    for (const id of providerIds) this.entry(id);
  }

  observeUpstream(provider: string, operation: string, outcome: UpstreamOutcome, seconds: number, failure?: string) {
    this.inner?.observeUpstream(provider, operation, outcome, seconds, failure);
    const entry = this.entry(provider);
    entry.calls += 1;
    if (outcome === 'ok') keepLast(entry.latencies, seconds * 1000);
    else if (outcome !== 'cancelled') {
      entry.failures += 1;
      keepLast(entry.errors, { at: new Date(this.now()), operation, outcome, message: failure ?? outcome });
    }
  }

  observeFallback(provider: string, operation: string): void {
    this.inner?.observeFallback?.(provider, operation);
  }

  observeCooldown(provider: string, until: number | null): void {
    this.inner?.observeCooldown?.(provider, until);
    this.entry(provider).coolUntil = until ?? 0;
  }

  snapshot(): UpstreamHealthSnapshot[] {
    const now = this.now();
    return [...this.entries]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([providerId, entry]) => ({
        providerId,
        coolingDownUntil: entry.coolUntil > now ? new Date(entry.coolUntil) : null,
        calls: entry.calls,
        failures: entry.failures,
        recentLatencyMs:
          entry.latencies.length === 0 ? null : entry.latencies.reduce((a, b) => a + b, 0) / entry.latencies.length,
        lastLatencyMs: entry.latencies.at(-1) ?? null,
        recentErrors: [...entry.errors].reverse(),
      }));
  }

  private entry(provider: string): Entry {
    let entry = this.entries.get(provider);
    if (!entry) {
      entry = { calls: 0, failures: 0, coolUntil: 0, latencies: [], errors: [] };
      this.entries.set(provider, entry);
    }
    return entry;
  }
}

function keepLast<T>(list: T[], item: T): void {
  list.push(item);
  if (list.length > RECENT) list.shift();
}
