import { API_KEY_TYPES, LIMIT_PERIODS, MODEL_PRIVACY_MODES } from '../../src/auth/auth-context.ts';
import { CURRENCIES } from '../../src/billing/money.ts';
import { builder } from '../builder.ts';

export const ApiKeyTypeEnum = builder.enumType('ApiKeyType', {
  values: API_KEY_TYPES,
  description: 'INFERENCE: inference, catalog and jobs. ADMIN: everything, plus keys and billing.',
});
export const LimitPeriodEnum = builder.enumType('LimitPeriod', {
  values: LIMIT_PERIODS,
  description: 'EPOCH resets daily at 00:00 UTC, MONTH on the 1st (UTC), LIFETIME never.',
});
export const ModelPrivacyEnum = builder.enumType('ModelPrivacy', { values: MODEL_PRIVACY_MODES });
export const CurrencyEnum = builder.enumType('Currency', { values: CURRENCIES });
