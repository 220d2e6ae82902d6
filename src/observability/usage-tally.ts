import { NANO_PER_UNIT, type Nano } from '../billing/money.ts';

/** What the settled calls of one (model, provider) pair added up to in this process. */
export interface UsageTotals {
  calls: number;
  tokensIn: number;
  tokensOut: number;
  /** What was charged, in nano-USD (exported as a float USD counter only when scraped). */
  spendNano: Nano;
  /** Billed units per unit type (tokens, images, characters, seconds…), as the usage lines state them. */
  readonly units: Map<string, number>;
}

/**
 * Settled usage per model and provider, kept as plain numbers and a bigint: a settlement costs two map lookups and
 * a few additions, and the Prometheus counters are derived from these totals when `/metrics` is scraped.
 */
export class UsageTally {
  private readonly byModel = new Map<string, Map<string, UsageTotals>>();

  totals(model: string, provider: string): UsageTotals {
    let byProvider = this.byModel.get(model);
    if (!byProvider) {
      byProvider = new Map();
      this.byModel.set(model, byProvider);
    }
    let totals = byProvider.get(provider);
    if (!totals) {
      totals = { calls: 0, tokensIn: 0, tokensOut: 0, spendNano: 0n, units: new Map() };
      byProvider.set(provider, totals);
    }
    return totals;
  }

  *entries(): Generator<{ model: string; provider: string; totals: UsageTotals }> {
    for (const [model, byProvider] of this.byModel)
      for (const [provider, totals] of byProvider) yield { model, provider, totals };
  }
}

/** Nano-USD as a float USD, split so that totals above 2^53 nano (≈ 9 M USD) keep their cents. */
export function usdOfNano(nano: Nano): number {
  return Number(nano / NANO_PER_UNIT) + Number(nano % NANO_PER_UNIT) / 1e9;
}
