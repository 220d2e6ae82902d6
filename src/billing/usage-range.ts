import type { SortOrder, UsageWindow } from './usage.types.ts';

/*
 * Time arithmetic for the usage export, in microseconds (PostgreSQL's timestamp precision), and the page
 * locator: the daily rollups say how many entries each day holds, so page N starts in a known day and the
 * database only skips rows inside that one day instead of OFFSET-ing through every earlier page.
 */

export const MICROS_PER_DAY = 86_400_000_000n;

export const microsOf = (date: Date): bigint => BigInt(date.getTime()) * 1000n;

/** 'YYYY-MM-DDTHH:MM:SS.ffffffZ': exact to the microsecond, for a timestamptz parameter. */
export function microsToIso(micros: bigint): string {
  const ms = micros / 1000n - (micros % 1000n < 0n ? 1n : 0n);
  const below = micros - ms * 1000n;
  return new Date(Number(ms)).toISOString().replace('Z', `${below.toString().padStart(3, '0')}Z`);
}

/** UTC calendar day of an instant. */
export const dayOfMicros = (micros: bigint): string => microsToIso(micros).slice(0, 10);

export const dayStartMicros = (day: string): bigint => BigInt(Date.parse(`${day}T00:00:00Z`)) * 1000n;

const max = (a: bigint | undefined, b: bigint): bigint => (a === undefined || b > a ? b : a);
const min = (a: bigint | undefined, b: bigint): bigint => (a === undefined || b < a ? b : a);

export const isEmptyWindow = (window: UsageWindow): boolean =>
  window.from !== undefined && window.until !== undefined && window.from >= window.until;

/**
 * How to count a window per day: the partial first and last days exactly (from the entries, at most one day
 * each), the whole days between them from the rollups (`afterDay` < day < `beforeDay`, either side open).
 */
export interface CountPlan {
  readonly exact: readonly { readonly day: string; readonly window: UsageWindow }[];
  readonly rollupDays: { readonly afterDay?: string; readonly beforeDay?: string } | undefined;
}

export function planCount(window: UsageWindow): CountPlan {
  if (isEmptyWindow(window)) return { exact: [], rollupDays: undefined };
  const exact: { day: string; window: UsageWindow }[] = [];
  const firstDay = window.from === undefined ? undefined : dayOfMicros(window.from);
  const lastDay = window.until === undefined ? undefined : dayOfMicros(window.until - 1n);
  if (firstDay !== undefined) {
    exact.push({
      day: firstDay,
      window: { ...window, until: min(window.until, dayStartMicros(firstDay) + MICROS_PER_DAY) },
    });
  }
  if (lastDay !== undefined && lastDay !== firstDay) {
    exact.push({ day: lastDay, window: { ...window, from: max(window.from, dayStartMicros(lastDay)) } });
  }
  const between =
    firstDay !== undefined &&
    lastDay !== undefined &&
    dayStartMicros(lastDay) - dayStartMicros(firstDay) <= MICROS_PER_DAY;
  return {
    exact,
    rollupDays: between
      ? undefined
      : { ...(firstDay !== undefined && { afterDay: firstDay }), ...(lastDay !== undefined && { beforeDay: lastDay }) },
  };
}

export interface DayCount {
  readonly day: string;
  readonly total: number;
  readonly diem: number;
}

/**
 * The day that holds entry number `offset` (0-based) in `order`, and the window from that day on (in `order`)
 * with the number of its entries to skip. Undefined when the offset is past the last entry.
 */
export function locatePage(
  window: UsageWindow,
  days: readonly DayCount[],
  order: SortOrder,
  offset: number,
): { window: UsageWindow; skip: number } | undefined {
  const ordered = [...days].sort((a, b) => (order === 'asc' ? a.day.localeCompare(b.day) : b.day.localeCompare(a.day)));
  let before = 0;
  for (const { day, total } of ordered) {
    if (offset < before + total) {
      const start = dayStartMicros(day);
      const narrowed: UsageWindow =
        order === 'desc'
          ? { ...window, until: min(window.until, start + MICROS_PER_DAY) }
          : { ...window, from: max(window.from, start) };
      return { window: narrowed, skip: offset - before };
    }
    before += total;
  }
  return undefined;
}

/** Merges per-day counts from several sources (the exact edge days and the rollups never overlap). */
export function mergeDayCounts(...lists: readonly (readonly DayCount[])[]): DayCount[] {
  const byDay = new Map<string, DayCount>();
  for (const list of lists) {
    for (const entry of list) {
      const seen = byDay.get(entry.day);
      byDay.set(
        entry.day,
        seen ? { day: entry.day, total: seen.total + entry.total, diem: seen.diem + entry.diem } : entry,
      );
    }
  }
  return [...byDay.values()];
}
