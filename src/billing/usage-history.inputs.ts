import { z } from 'zod';

const absentIfEmpty = (value: unknown) => (value === '' || value === null ? undefined : value);
const optional = <S extends z.ZodType>(schema: S) => z.preprocess(absentIfEmpty, schema.optional());

export const HISTORY_CURRENCIES = ['USD', 'DIEM', 'BUNDLED_CREDITS'] as const;
export const HISTORY_PAGE_SIZE = { min: 10, max: 1000, default: 1000 } as const;
export const HISTORY_CURSOR = /^[A-Za-z0-9_-]+$/;

const Timestamp = z
  .string()
  .max(40, 'must be at most 40 characters')
  .pipe(z.iso.datetime({ error: 'must be an ISO 8601 date-time in UTC (ending in Z)' }));

/**
 * GET /billing/usage-history: the first page takes the filters; every later page takes only `cursor`, which carries
 * them (a filter sent beside a cursor is refused, so a client cannot change the walk half-way).
 */
export const UsageHistoryQuery = z
  .object({
    currency: optional(z.enum(HISTORY_CURRENCIES)).describe('USD, DIEM or BUNDLED_CREDITS; first page only'),
    startTimestamp: optional(Timestamp).describe('Entries at or after this UTC date-time; first page only'),
    endTimestamp: optional(Timestamp).describe('Entries before this UTC date-time (exclusive); first page only'),
    pageSize: optional(
      z.coerce
        .number({ error: 'must be an integer' })
        .int('must be an integer')
        .min(HISTORY_PAGE_SIZE.min, `must be at least ${HISTORY_PAGE_SIZE.min}`)
        .max(HISTORY_PAGE_SIZE.max, `must be at most ${HISTORY_PAGE_SIZE.max}`),
    ).describe('Entries per page, 10 to 1000 (default 1000); first page only'),
    cursor: optional(
      z
        .string()
        .max(512, 'must be at most 512 characters')
        .regex(HISTORY_CURSOR, 'must be a nextCursor from an earlier page'),
    ).describe('The nextCursor of the previous page, alone'),
  })
  .superRefine((input, ctx) => {
    if (input.cursor !== undefined)
      for (const field of ['currency', 'startTimestamp', 'endTimestamp', 'pageSize'] as const)
        if (input[field] !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: [field],
            message: 'must not be sent with a cursor (the cursor carries the filters of the first page)',
          });
    if (
      input.startTimestamp &&
      input.endTimestamp &&
      Date.parse(input.endTimestamp) <= Date.parse(input.startTimestamp)
    )
      ctx.addIssue({ code: 'custom', path: ['endTimestamp'], message: 'endTimestamp must be after startTimestamp' });
  });
export type UsageHistoryQuery = z.output<typeof UsageHistoryQuery>;
