import type { Currency, Nano } from './money.ts';

/** A cost stated in both pricing currencies; DIEM and VCU pay the `diem` figure, USD and credits the `usd` one. */
export interface Price {
  readonly usd: Nano;
  readonly diem: Nano;
}

export type LimitGroup = 'usd' | 'diem';

/** Charging order for API-key accounts (docs/billing.md; VCU is the legacy form of DIEM). */
export const CHARGING_ORDER: readonly Currency[] = ['DIEM', 'VCU', 'BUNDLED_CREDITS', 'USD'];

export const limitGroupOf = (currency: Currency): LimitGroup =>
  currency === 'DIEM' || currency === 'VCU' ? 'diem' : 'usd';
export const priceIn = (price: Price, currency: Currency): Nano => price[limitGroupOf(currency)];

export interface Reservation {
  readonly id: string;
  readonly accountId: string;
  readonly apiKeyId: string | null;
  readonly currency: Currency;
  readonly amount: Nano;
  readonly keyPeriodStart: Date | null;
  readonly requestId: string;
  /** Set when the hold was drawn in memory from this process's lease (leased-holds.ts), not held in the database. */
  readonly leaseId?: string;
}

export interface UsageLine {
  /** Product billed, e.g. `lagoon-sim-chat-llm-input-mtoken`. */
  readonly sku: string;
  /** Breakdown type for analytics: Input, Output, Cache Read, Cache Write, or a single type. */
  readonly lineType?: string;
  /** Units consumed, as an exact decimal. */
  readonly units: string;
  /** USD price per unit, as an exact decimal (display only). */
  readonly pricePerUnitUsd: string;
  readonly cost: Price;
}

export interface InferenceDetails {
  readonly requestId: string;
  readonly inferenceExecutionTime: number;
  readonly promptTokens?: number;
  readonly completionTokens?: number;
}

export interface Usage {
  readonly modelId?: string;
  /** LLM, IMAGE, TTS, ASR, VIDEO, MUSIC, EMBEDDING, RPC, AUGMENT … */
  readonly modelType?: string;
  /** tokens, images, chars, minutes, seconds, requests, credits */
  readonly unitType?: string;
  readonly lines: readonly UsageLine[];
  readonly notes?: string;
  readonly inferenceDetails?: InferenceDetails | null;
  /** The provider that served the call, for the metrics and the call's log line (not stored). */
  readonly providerId?: string;
}

export interface SettledCharge {
  readonly reservationId: string;
  readonly currency: Currency;
  readonly charged: Nano;
  readonly balanceAfter: Nano;
  readonly usageEntryIds: readonly string[];
  /** True when this call found the reservation already settled (nothing charged twice). */
  readonly alreadySettled: boolean;
}

export interface BalanceSnapshot {
  readonly currency: Currency;
  readonly amount: Nano;
  readonly reserved: Nano;
}
