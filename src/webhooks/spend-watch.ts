import type { LimitPeriod } from '../auth/auth-context.ts';
import { formatNano } from '../billing/money.ts';
import { periodStart } from '../billing/periods.ts';
import type { SettledUsageEntry, UsagePublisher } from '../billing/usage.types.ts';
import type { Database } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import type { WebhookEvent } from './webhook-emitter.ts';
import * as settings from './webhook-settings.repository.ts';

/*
 * key.spend_limit.80 / .100 and balance.low, detected where usage is settled: the billing core tells its publisher
 * after each settlement commits (src/billing/holds.ts), this wrapper notes the keys and accounts involved and checks
 * them a moment later, off the request's path, a batch at a time. Only keys with a limit are read (keys seen without
 * one are remembered a while), only accounts with a threshold. A crossing is told once per key, level and period
 * (webhook_key_alerts); balance.low once per fall under the threshold (re-armed when the balance is back over it).
 */

const LEVELS = [80, 100] as const;
const NO_LIMIT_MEMORY_MS = 60_000;

export class SpendWatch implements UsagePublisher {
  private readonly keys = new Set<string>();
  private readonly accounts = new Set<string>();
  private readonly unlimited = new Map<string, number>();
  private scheduled = false;
  private closed = false;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: {
      readonly db: Database;
      readonly logger: Logger;
      readonly emitter: { emitLater(event: WebhookEvent): void };
      readonly usdBalanceOf: (accountId: string) => Promise<bigint>;
      readonly inner?: UsagePublisher | undefined;
    },
  ) {}

  usageSettled(entries: readonly SettledUsageEntry[]): void {
    this.deps.inner?.usageSettled(entries);
    if (this.closed) return;
    const now = Date.now();
    for (const entry of entries) {
      this.accounts.add(entry.accountId);
      if (entry.apiKeyId && (this.unlimited.get(entry.apiKeyId) ?? 0) < now) this.keys.add(entry.apiKeyId);
    }
    this.schedule();
  }

  /** The balance moved up (a top-up): balance.low may re-arm. */
  balanceChanged(accountId: string): void {
    if (this.closed) return;
    this.accounts.add(accountId);
    this.schedule();
  }

  /** Waits for the checks noted so far (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.scheduled || this.keys.size > 0 || this.accounts.size > 0) await this.running.then(tick);
    await this.running;
  }

  /**
   * Finishes the checks noted so far and takes no more (shutdown, before the database closes). A crossing that
   * settlements written after this reach is told at the key's or account's next settlement after the restart.
   */
  async close(): Promise<void> {
    await this.idle();
    this.closed = true;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.running = this.running.then(() => this.check());
    });
  }

  private async check(): Promise<void> {
    this.scheduled = false;
    const keys = [...this.keys];
    const accounts = [...this.accounts];
    this.keys.clear();
    this.accounts.clear();
    try {
      await this.checkKeys(keys);
      await this.checkBalances(accounts);
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'the spend and balance webhook check failed');
    }
  }

  private async checkKeys(keyIds: readonly string[]): Promise<void> {
    const { db, emitter } = this.deps;
    const limited = await settings.limitedKeys(db, keyIds);
    const until = Date.now() + NO_LIMIT_MEMORY_MS;
    for (const id of keyIds) if (!limited.some((key) => key.id === id)) this.unlimited.set(id, until);
    if (this.unlimited.size > 10_000) this.unlimited.clear();
    for (const key of limited) {
      const start = periodStart(key.limit_period as LimitPeriod, new Date());
      const spend = await settings.spendOf(db, key.id, start);
      const groups = [
        { currency: 'usd', limit: key.limit_usd, spent: spend?.spent_usd ?? 0n },
        { currency: 'diem', limit: key.limit_diem, spent: spend?.spent_diem ?? 0n },
      ];
      for (const level of LEVELS) {
        const crossed = groups.find((g) => g.limit !== null && g.spent * 100n >= g.limit * BigInt(level));
        if (!crossed || crossed.limit === null) continue;
        if (!(await settings.firstCrossing(db, key.id, start, level))) continue;
        emitter.emitLater({
          accountId: key.account_id,
          type: `key.spend_limit.${level}`,
          eventId: `evt_key_${key.id.replaceAll('-', '')}_${start.getTime()}_${level}`,
          data: {
            apiKeyId: key.id,
            description: key.description,
            level,
            currency: crossed.currency.toUpperCase(),
            limit: formatNano(crossed.limit),
            spent: formatNano(crossed.spent),
            limitPeriod: key.limit_period,
            periodStart: start.toISOString(),
          },
        });
      }
    }
  }

  private async checkBalances(accountIds: readonly string[]): Promise<void> {
    const { db, emitter } = this.deps;
    for (const row of await settings.thresholds(db, accountIds)) {
      const threshold = row.balance_low_threshold;
      if (threshold === null) continue;
      const balance = await this.deps.usdBalanceOf(row.account_id);
      if (balance < threshold && row.balance_low_armed) {
        if (!(await settings.setArmed(db, row.account_id, false))) continue;
        emitter.emitLater({
          accountId: row.account_id,
          type: 'balance.low',
          data: { currency: 'USD', balance: formatNano(balance), threshold: formatNano(threshold) },
        });
      } else if (balance >= threshold && !row.balance_low_armed) {
        await settings.setArmed(db, row.account_id, true);
      }
    }
  }
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
