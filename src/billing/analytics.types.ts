import type { Nano } from './money.ts';

/** The model types analytics report (analytics.units.ts maps every usage record onto one). */
export const ANALYTICS_MODEL_TYPES = ['LLM', 'IMAGE', 'TTS', 'ASR', 'VIDEO'] as const;
export type AnalyticsModelType = (typeof ANALYTICS_MODEL_TYPES)[number];
/** The unit types analytics report. */
export const ANALYTICS_UNIT_TYPES = ['tokens', 'images', 'chars', 'minutes', 'seconds'] as const;
export type AnalyticsUnitType = (typeof ANALYTICS_UNIT_TYPES)[number];

/**
 * Spend is split the way clients read it: `usd` is what USD and BUNDLED_CREDITS paid, `diem` what DIEM
 * and its legacy form VCU paid. Amounts are positive nano-units; units are exact decimal text.
 */
export interface SpendTotals {
  readonly usd: Nano;
  readonly diem: Nano;
  readonly units: string;
}

/** `units`: only the lines measured in `unitType` (a chat's web search request is not a token). */
export interface ModelUsage extends SpendTotals {
  readonly modelName: string;
  readonly unitType: AnalyticsUnitType;
  readonly modelType: AnalyticsModelType;
  /** Per line type (Input, Output, Cache Read, Cache Write…), only when the model has several. */
  readonly breakdown?: readonly (SpendTotals & { readonly type: string })[];
}

/** `units`: the lines measured in a listed unit type (requests and credits are left out). */
export interface KeyUsage extends SpendTotals {
  /** null: the web app (usage without an API key). */
  readonly apiKeyId: string | null;
  readonly description: string;
}

/** DIEM spend per series name on one day. */
export interface DailySeries {
  /** UTC day, YYYY-MM-DD. */
  readonly date: string;
  readonly values: readonly { readonly name: string; readonly diem: Nano; readonly usd: Nano }[];
}

export interface UsageAnalytics {
  /** `Nd`, or `startDate:endDate`. */
  readonly lookback: string;
  readonly startDay: string;
  readonly endDay: string;
  /** Every day of the range, oldest first. */
  readonly byDate: readonly { readonly date: string; readonly usd: Nano; readonly diem: Nano }[];
  /** Highest total spend (usd + diem) first. */
  readonly byModel: readonly ModelUsage[];
  readonly byModelDaily: readonly DailySeries[];
  /** At most 8: the first models of byModel. */
  readonly topModels: readonly string[];
  readonly byKey: readonly KeyUsage[];
  readonly byKeyDaily: readonly DailySeries[];
  /** At most 8: the labels of the first keys of byKey (a description shared by two of them gets "(…last6)"). */
  readonly topKeyNames: readonly string[];
}
