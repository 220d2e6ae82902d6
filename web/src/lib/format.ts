/** Amounts arrive as exact decimal strings (the Decimal scalar); shown rounded for reading, never summed as floats. */

/** "12.3456789" → "12.345679": at least 2 and up to 6 decimals, so a call's fraction of a cent still shows. */
export function formatAmount(amount: string | number, currency: string): string {
  const value = typeof amount === 'number' ? amount : Number(amount);
  if (!Number.isFinite(value)) return `${amount} ${currency}`;
  const text = value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 });
  return currency === 'USD' ? `$${text}` : `${text} ${currency}`;
}

/** Exact sum of decimal strings in nano units (9 places), as a decimal string. */
export function sumDecimals(values: readonly string[]): string {
  let total = 0n;
  for (const value of values) total += toNano(value);
  const negative = total < 0n;
  const abs = negative ? -total : total;
  const whole = abs / 1_000_000_000n;
  const fraction = (abs % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

function toNano(value: string): bigint {
  const match = /^(-?)(\d+)(?:\.(\d{1,9})\d*)?$/.exec(value.trim());
  if (!match) return 0n;
  const nano = BigInt(match[2] ?? '0') * 1_000_000_000n + BigInt((match[3] ?? '').padEnd(9, '0') || '0');
  return match[1] ? -nano : nano;
}

export function formatDate(iso: string): string {
  return new Date(iso).toLocaleString('en-US', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
}
