import { z } from 'zod';
import { CURRENCIES } from './money.ts';
import { SORT_ORDERS } from './usage.types.ts';

/*
 * The shared input schemas of the billing read side (REST query strings and GraphQL arguments both go through
 * these). Query-string values arrive as text, so numbers are coerced; "" counts as absent.
 */

const absentIfEmpty = (value: unknown) => (value === '' || value === null ? undefined : value);
const optional = <S extends z.ZodType>(schema: S) => z.preprocess(absentIfEmpty, schema.optional());

export const USAGE_PAGE_SIZE = { min: 1, max: 500, default: 200 } as const;
const MODEL_ID_MAX = 200;
const MODEL_TYPE_MAX = 64;
export const ANALYTICS_MAX_DAYS = 90;

/** An ISO 8601 date-time with Z or an offset, or a UTC calendar day `YYYY-MM-DD`. */
const Instant = z.union([z.iso.datetime({ offset: true }), z.iso.date()], {
  error: 'must be an ISO 8601 date-time (or YYYY-MM-DD)',
});

const UsageFilterShape = z.object({
  currency: optional(z.enum(CURRENCIES)).describe('USD, VCU, DIEM or BUNDLED_CREDITS'),
  apiKeyId: optional(z.uuid('must be an API key id (UUID)')).describe(
    'Only entries of this API key (an id from GET /api_keys)',
  ),
  modelId: optional(
    z
      .string()
      .max(MODEL_ID_MAX, `must be at most ${MODEL_ID_MAX} characters`)
      .regex(/^[^\p{Cc}]+$/u, 'must be a model id without control characters'),
  ).describe('Only entries of this model id (as usage entries record it)'),
  modelType: optional(
    z
      .string()
      .max(MODEL_TYPE_MAX, `must be at most ${MODEL_TYPE_MAX} characters`)
      .regex(/^[^\p{Cc}]+$/u, 'must be a model type without control characters'),
  ).describe('Only entries of this model type (as usage entries record it: LLM, IMAGE, TTS, ASR, VIDEO…)'),
  startDate: optional(Instant).describe(
    'Entries created at or after this ISO 8601 date-time (a YYYY-MM-DD day starts at 00:00 UTC)',
  ),
  endDate: optional(Instant).describe(
    'Entries created at or before this ISO 8601 date-time (a YYYY-MM-DD day includes the whole day)',
  ),
  sortOrder: optional(z.enum(SORT_ORDERS)).describe('By creation time (ties by id); default desc'),
});

const startNotAfterEnd = (input: { startDate?: string | undefined; endDate?: string | undefined }) =>
  !input.startDate || !input.endDate || startOf(input.startDate) <= endOf(input.endDate);
const startNotAfterEndIssue = { path: ['endDate'], message: 'endDate must not be before startDate' };

export const UsageFilterInput = UsageFilterShape.refine(startNotAfterEnd, startNotAfterEndIssue);
export type UsageFilterInput = z.output<typeof UsageFilterInput>;

const integer = () => z.coerce.number({ error: 'must be an integer' }).int('must be an integer');
const pageSize = integer()
  .min(USAGE_PAGE_SIZE.min, `must be at least ${USAGE_PAGE_SIZE.min}`)
  .max(USAGE_PAGE_SIZE.max, `must be at most ${USAGE_PAGE_SIZE.max}`);

/** GET /billing/usage. `limit` and `page` stay undefined when absent (the CSV export streams everything then). */
export const UsageExportQuery = UsageFilterShape.extend({
  limit: optional(pageSize).describe('Entries per page: 1 to 500, default 200'),
  page: optional(integer().min(1, 'must be at least 1')).describe('Page number, at least 1; default 1'),
}).refine(startNotAfterEnd, startNotAfterEndIssue);
export type UsageExportQuery = z.output<typeof UsageExportQuery>;

/** The GraphQL connection's page arguments. */
export const UsageConnectionArgs = z.object({
  first: optional(pageSize),
  last: optional(pageSize),
  after: optional(z.string().max(200)),
  before: optional(z.string().max(200)),
});

const LOOKBACK = /^[1-9]\d*d$/;
/** A day of the analytics series: each is a row of the answer, so one the database cannot hold (year 0) is refused. */
const AnalyticsDay = z.iso
  .date({ error: 'must be a date YYYY-MM-DD' })
  .refine((day) => day >= '1970-01-01', 'must be a date from 1970-01-01 to 9999-12-31');

/** GET /billing/usage-analytics: `lookback` (default 7d, up to 90d) or `startDate` + `endDate` (YYYY-MM-DD, both). */
export const UsageAnalyticsQuery = z
  .object({
    lookback: optional(
      z
        .string()
        .regex(LOOKBACK, 'must be a number of days such as 7d (1d to 90d)')
        .refine((value) => Number(value.slice(0, -1)) <= ANALYTICS_MAX_DAYS, `must be at most ${ANALYTICS_MAX_DAYS}d`),
    ).describe('Days up to and including today (UTC), e.g. 7d; 1d to 90d; default 7d'),
    startDate: optional(AnalyticsDay).describe('First day (YYYY-MM-DD, UTC); requires endDate'),
    endDate: optional(AnalyticsDay).describe('Last day (YYYY-MM-DD, UTC), inclusive; requires startDate'),
  })
  .superRefine((input, ctx) => {
    if (input.startDate && !input.endDate)
      ctx.addIssue({ code: 'custom', path: ['endDate'], message: 'endDate is required together with startDate' });
    if (input.endDate && !input.startDate)
      ctx.addIssue({ code: 'custom', path: ['startDate'], message: 'startDate is required together with endDate' });
    if (input.lookback && (input.startDate || input.endDate))
      ctx.addIssue({
        code: 'custom',
        path: ['lookback'],
        message: 'use either lookback or startDate and endDate, not both',
      });
    if (input.startDate && input.endDate) {
      const days = (Date.parse(input.endDate) - Date.parse(input.startDate)) / 86_400_000 + 1;
      if (days < 1)
        ctx.addIssue({ code: 'custom', path: ['endDate'], message: 'endDate must not be before startDate' });
      else if (days > ANALYTICS_MAX_DAYS)
        ctx.addIssue({
          code: 'custom',
          path: ['endDate'],
          message: `the range from startDate to endDate must be at most ${ANALYTICS_MAX_DAYS} days`,
        });
    }
  });
export type UsageAnalyticsQuery = z.output<typeof UsageAnalyticsQuery>;

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;

/** First instant (ms) a start bound admits. */
function startOf(value: string): number {
  return Date.parse(DATE_ONLY.test(value) ? `${value}T00:00:00Z` : value);
}

/** Last instant (ms) an end bound admits. */
function endOf(value: string): number {
  return DATE_ONLY.test(value) ? Date.parse(`${value}T00:00:00Z`) + DAY_MS - 1 : Date.parse(value);
}

/** Microseconds since the epoch of an ISO date-time, keeping digits below the millisecond. */
export function isoToMicros(value: string): bigint {
  if (DATE_ONLY.test(value)) return BigInt(Date.parse(`${value}T00:00:00Z`)) * 1000n;
  const fraction = /T\d{2}:\d{2}:\d{2}\.(\d+)/.exec(value)?.[1] ?? '';
  const belowMs = BigInt((fraction.slice(3, 6) || '0').padEnd(3, '0'));
  return BigInt(Date.parse(value)) * 1000n + belowMs;
}

/**
 * The window's outer limits. PostgreSQL refuses a timestamp before year 1 or written with a five-digit year (the
 * day after 9999-12-31, which the per-day counting reaches); no entry is older than 1970 or as new as the year
 * 9999, so bounds outside are moved onto these limits and the same entries match.
 */
const EARLIEST_MICROS = 0n;
const LATEST_MICROS = BigInt(Date.parse('9999-01-01T00:00:00Z')) * 1000n;
const withinLimits = (micros: bigint) =>
  micros < EARLIEST_MICROS ? EARLIEST_MICROS : micros > LATEST_MICROS ? LATEST_MICROS : micros;

/** The half-open window [from, until) in microseconds for a start and an (inclusive) end bound. */
export function windowBounds(
  startDate: string | undefined,
  endDate: string | undefined,
): { from?: bigint; until?: bigint } {
  const from = startDate === undefined ? undefined : withinLimits(isoToMicros(startDate));
  const until =
    endDate === undefined
      ? undefined
      : withinLimits(
          DATE_ONLY.test(endDate) ? isoToMicros(endDate) + BigInt(DAY_MS) * 1000n : isoToMicros(endDate) + 1n,
        );
  return { ...(from !== undefined && { from }), ...(until !== undefined && { until }) };
}
