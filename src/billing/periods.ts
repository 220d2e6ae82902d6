import type { LimitPeriod } from '../auth/auth-context.ts';

/** Start of the key-limit period that contains `now` (all periods are UTC). */
export function periodStart(period: LimitPeriod, now: Date): Date {
  switch (period) {
    case 'EPOCH':
      return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    case 'MONTH':
      return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    case 'LIFETIME':
      return new Date(0);
  }
}

/** Calendar day (UTC) of an instant, as the rollups key it. */
export const utcDay = (instant: Date): string => instant.toISOString().slice(0, 10);
