import type { EventBus } from '../events/event-bus.ts';
import type { Logger } from '../logger.ts';
import { CURRENCIES, type Currency } from './money.ts';
import { detailsOf } from './usage.repository.ts';
import type { SettledUsageEntry, UsageEntry, UsageEntryEvent, UsagePublisher } from './usage.types.ts';

export const USAGE_TOPIC = 'lagoon:usage';

/** Publishes settled usage entries per account on the event bus (BillingService calls it after commit). */
export class UsageEventPublisher implements UsagePublisher {
  constructor(private readonly deps: { events: EventBus; logger: Logger }) {}

  usageSettled(entries: readonly SettledUsageEntry[]): void {
    const byAccount = new Map<string, UsageEntryEvent[]>();
    for (const entry of entries) {
      const list = byAccount.get(entry.accountId) ?? [];
      list.push(toEvent(entry));
      byAccount.set(entry.accountId, list);
    }
    for (const [accountId, list] of byAccount) {
      try {
        this.deps.events.publish(USAGE_TOPIC, accountId, { entries: list });
      } catch (error) {
        // The charge is committed; a lost live update must never turn into a failed request.
        this.deps.logger.error({ err: error, accountId }, 'could not publish usage entries');
      }
    }
  }
}

function toEvent(entry: SettledUsageEntry): UsageEntryEvent {
  return {
    id: entry.id,
    accountId: entry.accountId,
    apiKeyId: entry.apiKeyId,
    createdAt: entry.createdAt.toISOString(),
    sku: entry.sku,
    modelId: entry.modelId,
    modelType: entry.modelType,
    unitType: entry.unitType,
    lineType: entry.lineType,
    pricePerUnitUsd: entry.pricePerUnitUsd,
    units: entry.units,
    amountNano: entry.amount.toString(),
    currency: entry.currency,
    notes: entry.notes,
    requestId: entry.requestId,
    inferenceDetails: entry.inferenceDetails,
  };
}

export function usageEntryFromEvent(event: UsageEntryEvent): UsageEntry {
  const createdAt = new Date(event.createdAt);
  return {
    id: event.id,
    accountId: event.accountId,
    apiKeyId: event.apiKeyId,
    createdAt,
    createdAtMicros: BigInt(createdAt.getTime()) * 1000n,
    sku: event.sku,
    modelId: event.modelId,
    modelType: event.modelType,
    unitType: event.unitType,
    lineType: event.lineType,
    pricePerUnitUsd: event.pricePerUnitUsd,
    units: event.units,
    amount: BigInt(event.amountNano),
    currency: (CURRENCIES as readonly string[]).includes(event.currency) ? (event.currency as Currency) : 'USD',
    notes: event.notes,
    requestId: event.requestId,
    inferenceDetails: detailsOf(event.inferenceDetails),
  };
}
