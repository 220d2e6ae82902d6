import { z } from 'zod';
import { parseAtto } from '../billing/money.ts';

/* Field types shared by the sections of the operator file (schema.ts and the sections split out of it). */

/** Provider ids: lowercase letters, digits, "_" and "-". */
export const PROVIDER_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const ProviderId = z.string().regex(PROVIDER_ID_PATTERN, 'Use lowercase letters, digits, "_" and "-"');

/** True when a number is a plain decimal exact to 18 places (prices are parsed to atto-units, never used as floats). */
export const exactDecimal = (value: number): boolean => {
  try {
    parseAtto(value);
    return true;
  } catch {
    return false;
  }
};
export const EXACT_DECIMAL_MESSAGE = 'must be a decimal with at most 18 decimal places';
