import { z } from 'zod';
import { formatNano, MAX_STORED_NANO, MoneyFormatError, parseNano } from '../billing/money.ts';
import { storedString } from '../validation.ts';
import { API_KEY_TYPES, LIMIT_PERIODS, MODEL_PRIVACY_MODES } from './auth-context.ts';

/** A non-negative money amount given as a JSON number or decimal string, read exactly into nano-units. */
export const moneyAmount = z.union([z.number(), z.string()]).transform((value, ctx) => {
  try {
    const nano = parseNano(value);
    if (nano < 0n) ctx.addIssue({ code: 'custom', message: 'Must be 0 or more' });
    if (nano > MAX_STORED_NANO)
      ctx.addIssue({ code: 'custom', message: `Must be at most ${formatNano(MAX_STORED_NANO)}` });
    return nano;
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: error instanceof MoneyFormatError ? error.message : 'Invalid amount' });
    return z.NEVER;
  }
});

const limitValue = moneyAmount.nullable().optional();

export const ConsumptionLimitInput = z.object({ usd: limitValue, diem: limitValue, vcu: limitValue }).strict();

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** `""` or null clears, `YYYY-MM-DD` means that day at 00:00 UTC, or a full ISO date-time. */
export const ExpiresAtInput = z
  .union([
    z.literal(''),
    z.null(),
    z.string().regex(DATE_ONLY, 'Use YYYY-MM-DD or an ISO date-time'),
    z.iso.datetime({ offset: true }),
  ])
  .transform((value, ctx) => {
    if (value === '' || value === null) return null;
    const date = new Date(DATE_ONLY.test(value) ? `${value}T00:00:00.000Z` : value);
    if (Number.isNaN(date.getTime())) {
      ctx.addIssue({ code: 'custom', message: 'Not a valid date' });
      return z.NEVER;
    }
    return date;
  });

export const CreateApiKeyInput = z
  .object({
    apiKeyType: z.enum(API_KEY_TYPES),
    description: storedString().trim().min(1, 'Required').max(64, 'At most 64 characters'),
    expiresAt: ExpiresAtInput.optional(),
    consumptionLimit: ConsumptionLimitInput.optional(),
    limitPeriod: z.enum(LIMIT_PERIODS).optional(),
    modelPrivacy: z.enum(MODEL_PRIVACY_MODES).optional(),
  })
  .strict();
export type CreateApiKeyInput = z.output<typeof CreateApiKeyInput>;

export const UpdateApiKeyInput = z
  .object({
    id: z.uuid('Must be an API key id (UUID)'),
    description: storedString().trim().min(1, 'Required').max(64, 'At most 64 characters').optional(),
    expiresAt: ExpiresAtInput.optional(),
    consumptionLimit: ConsumptionLimitInput.optional(),
    limitPeriod: z.enum(LIMIT_PERIODS).optional(),
    modelPrivacy: z.enum(MODEL_PRIVACY_MODES).optional(),
  })
  .strict();
export type UpdateApiKeyInput = z.output<typeof UpdateApiKeyInput>;

export const ApiKeyIdInput = z.object({ id: z.uuid('Must be an API key id (UUID)') });
