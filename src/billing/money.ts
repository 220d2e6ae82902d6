import { clip } from '../errors.ts';

/**
 * Exact money. Amounts are bigint nano-units (1e-9 of a USD or DIEM); prices per unit can be finer than a
 * nano-unit (a per-token price), so they are kept as bigint atto-units (1e-18). Floats never enter arithmetic:
 * numbers from JSON or config are read through their decimal text.
 */
export type Nano = bigint;
export type Atto = bigint;

export const NANO_DIGITS = 9;
export const ATTO_DIGITS = 18;
export const NANO_PER_UNIT = 1_000_000_000n;

export const CURRENCIES = ['USD', 'DIEM', 'VCU', 'BUNDLED_CREDITS'] as const;
export type Currency = (typeof CURRENCIES)[number];

export class MoneyFormatError extends Error {}

/** Digits of the largest scaled integer parsed: far beyond any amount or price, small enough to cost nothing. */
const MAX_SCALED_DIGITS = 60;

/** The largest amount a PostgreSQL bigint column holds (balances, limits, usage amounts in nano-units). */
export const MAX_STORED_NANO: Nano = 2n ** 63n - 1n;

const DECIMAL = /^([+-])?(\d+)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$|^([+-])?\.(\d+)(?:[eE]([+-]?\d+))?$/;

/** Parses a decimal (string or number, plain or exponent form) into an integer at 10^-digits scale, exactly. */
export function parseScaled(value: string | number, digits: number): bigint {
  if (typeof value === 'number' && !Number.isFinite(value)) throw new MoneyFormatError(`not a finite number: ${value}`);
  const text = (typeof value === 'number' ? String(value) : value).trim();
  const match = DECIMAL.exec(text);
  if (!match) throw new MoneyFormatError(`not a decimal number: "${clip(text)}"`);
  const sign = match[1] ?? match[5] ?? '+';
  const whole = match[2] ?? '0';
  const fraction = match[3] ?? match[6] ?? '';
  const exponent = Number(match[4] ?? match[7] ?? '0');
  let digitsText = whole + fraction;
  let pointShift = fraction.length - exponent - digits; // how many trailing digits lie below the scale
  if (pointShift > 0) {
    const dropped = digitsText.slice(Math.max(0, digitsText.length - pointShift));
    if (/[1-9]/.test(dropped)) throw new MoneyFormatError(`"${clip(text)}" has more than ${digits} decimal places`);
    digitsText = digitsText.slice(0, Math.max(0, digitsText.length - pointShift));
    pointShift = 0;
  }
  if (!/[1-9]/.test(digitsText)) return 0n;
  // "1e999999999" would otherwise build an integer of a billion digits (seconds of CPU, then memory).
  if (digitsText.replace(/^0+/, '').length - pointShift > MAX_SCALED_DIGITS)
    throw new MoneyFormatError(`"${clip(text)}" is too large`);
  const magnitude = BigInt(digitsText) * 10n ** BigInt(-pointShift);
  return sign === '-' ? -magnitude : magnitude;
}

export const parseNano = (value: string | number): Nano => parseScaled(value, NANO_DIGITS);
export const parseAtto = (value: string | number): Atto => parseScaled(value, ATTO_DIGITS);

/** Formats a scaled integer as the shortest exact decimal string ("12.5", "-0.000001", "0"). */
export function formatScaled(amount: bigint, digits: number): string {
  const negative = amount < 0n;
  const magnitude = (negative ? -amount : amount).toString().padStart(digits + 1, '0');
  const whole = magnitude.slice(0, magnitude.length - digits);
  const fraction = magnitude.slice(magnitude.length - digits).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

export const formatNano = (amount: Nano): string => formatScaled(amount, NANO_DIGITS);
export const formatAtto = (amount: Atto): string => formatScaled(amount, ATTO_DIGITS);

/** For JSON edges only: the nearest double to the exact decimal. */
export const nanoToNumber = (amount: Nano): number => Number(formatNano(amount));

/** Fixed decimals, rounded half up (for headers such as "0.00001250"). */
export function formatNanoFixed(amount: Nano, decimals: number): string {
  if (decimals >= NANO_DIGITS) return formatFixedExact(amount, decimals);
  const step = 10n ** BigInt(NANO_DIGITS - decimals);
  const half = step / 2n;
  const rounded = amount >= 0n ? ((amount + half) / step) * step : -(((-amount + half) / step) * step);
  return formatFixedExact(rounded, decimals);
}

function formatFixedExact(amount: Nano, decimals: number): string {
  const [whole, fraction = ''] = formatNano(amount).split('.');
  return decimals === 0 ? (whole ?? '0') : `${whole}.${fraction.padEnd(decimals, '0').slice(0, decimals)}`;
}

/** Cost of `units` at `pricePerBlock` (atto-units) per `blockSize` units, rounded up to the next nano-unit. */
export function costNano(units: bigint, pricePerBlock: Atto, blockSize: bigint = 1n): Nano {
  if (units < 0n || pricePerBlock < 0n || blockSize <= 0n)
    throw new MoneyFormatError('negative units, price or block size');
  const divisor = blockSize * 10n ** BigInt(ATTO_DIGITS - NANO_DIGITS);
  const numerator = units * pricePerBlock;
  return (numerator + divisor - 1n) / divisor;
}

export const maxNano = (a: Nano, b: Nano): Nano => (a > b ? a : b);
