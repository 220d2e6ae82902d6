import type { UsageEntryInsert } from './billing.repository.ts';
import type { Currency, Nano } from './money.ts';

/** What a usage entry records about the call (its `inferenceDetails`, docs/api.md). */
export interface UsageEntryDetails {
  readonly requestId: string;
  readonly inferenceExecutionTime: number;
  readonly promptTokens?: number;
  readonly completionTokens?: number;
}

/** One line of the usage ledger as the read side sees it. Money stays bigint nano-units; decimals stay text. */
export interface UsageEntry {
  readonly id: string;
  readonly accountId: string;
  readonly apiKeyId: string | null;
  readonly createdAt: Date;
  /** created_at in microseconds since the epoch: the exact sort key (a Date keeps only milliseconds). */
  readonly createdAtMicros: bigint;
  readonly sku: string;
  readonly modelId: string | null;
  readonly modelType: string | null;
  readonly unitType: string | null;
  readonly lineType: string | null;
  /** Exact decimal text. */
  readonly pricePerUnitUsd: string;
  /** Exact decimal text. */
  readonly units: string;
  /** Negative for charges. */
  readonly amount: Nano;
  readonly currency: Currency;
  readonly notes: string;
  readonly requestId: string | null;
  readonly inferenceDetails: UsageEntryDetails | null;
}

export const SORT_ORDERS = ['asc', 'desc'] as const;
export type SortOrder = (typeof SORT_ORDERS)[number];

/**
 * Which entries: an optional currency, key, model and model type, and a half-open time window in microseconds, `from`
 * inclusive and `until` exclusive (an inclusive date-time `endDate` becomes `until` = endDate + 1 µs).
 */
export interface UsageWindow {
  readonly currency?: Currency | undefined;
  readonly apiKeyId?: string | undefined;
  readonly modelId?: string | undefined;
  readonly modelType?: string | undefined;
  readonly from?: bigint | undefined;
  readonly until?: bigint | undefined;
}

/** The keyset position of an entry in (created_at, id) order. */
export interface UsageCursor {
  readonly micros: bigint;
  readonly id: string;
}

export interface UsagePagination {
  readonly limit: number;
  readonly page: number;
  readonly total: number;
  readonly totalPages: number;
}

export interface UsagePage {
  readonly entries: readonly UsageEntry[];
  readonly pagination: UsagePagination;
  readonly warningMessage?: string;
}

/** A usage entry as settlement inserted it, with its new id. */
export type SettledUsageEntry = UsageEntryInsert & { readonly id: string };

/** Told about usage entries once the settlement that wrote them has committed (never inside the transaction). */
export interface UsagePublisher {
  usageSettled(entries: readonly SettledUsageEntry[]): void;
}

/** Writes the charges settled so far on an account (balance leases write them after the answer); reads call it first. */
export interface SettledCharges {
  /** One account's pending charges, or (none) every account's. */
  flush(accountId?: string): Promise<void>;
}

/** A usage entry on the event bus: JSON-safe (amount as integer nano-unit text, time as ISO text). */
export interface UsageEntryEvent {
  readonly id: string;
  readonly accountId: string;
  readonly apiKeyId: string | null;
  readonly createdAt: string;
  readonly sku: string;
  readonly modelId: string | null;
  readonly modelType: string | null;
  readonly unitType: string | null;
  readonly lineType: string | null;
  readonly pricePerUnitUsd: string;
  readonly units: string;
  readonly amountNano: string;
  readonly currency: string;
  readonly notes: string;
  readonly requestId: string | null;
  readonly inferenceDetails: unknown;
}

export interface UsageSettledEvent {
  readonly entries: readonly UsageEntryEvent[];
}
