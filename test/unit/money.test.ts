import { describe, expect, it } from 'vitest';
import {
  costNano,
  formatNano,
  formatNanoFixed,
  MoneyFormatError,
  parseAtto,
  parseNano,
} from '../../src/billing/money.ts';

describe('money', () => {
  it('should read decimals exactly, in plain and exponent forms', () => {
    expect(parseNano('12.5')).toBe(12_500_000_000n);
    expect(parseNano(0.1)).toBe(100_000_000n);
    expect(parseNano('-0.000000001')).toBe(-1n);
    expect(parseNano(1e-7)).toBe(100n);
    expect(parseNano('1.5e3')).toBe(1_500_000_000_000n);
    expect(parseNano('.25')).toBe(250_000_000n);
    expect(parseAtto(0.9375)).toBe(937_500_000_000_000_000n);
  });

  it('should refuse non-numbers and precision it cannot hold', () => {
    expect(() => parseNano('abc')).toThrow(MoneyFormatError);
    expect(() => parseNano('1.0000000001')).toThrow(/more than 9 decimal places/);
    expect(() => parseNano(Number.NaN)).toThrow(MoneyFormatError);
    expect(parseNano('1.0000000000')).toBe(1_000_000_000n);
  });

  it('should format the shortest exact decimal', () => {
    expect(formatNano(12_500_000_000n)).toBe('12.5');
    expect(formatNano(0n)).toBe('0');
    expect(formatNano(-1n)).toBe('-0.000000001');
    expect(formatNanoFixed(12_500n, 8)).toBe('0.00001250');
    expect(formatNanoFixed(18_750n, 8)).toBe('0.00001875');
    expect(formatNanoFixed(18_755n, 8)).toBe('0.00001876');
  });

  it('should price per-token usage exactly and round up to the nano-unit', () => {
    // 1234 tokens at 0.9375 USD per 1M tokens = 0.001156875 USD
    expect(costNano(1234n, parseAtto('0.9375'), 1_000_000n)).toBe(1_156_875n);
    // 1 token at 0.5 USD per 1M = 0.0000005 USD = 500 nano
    expect(costNano(1n, parseAtto('0.5'), 1_000_000n)).toBe(500n);
    // 3 tokens at 0.0001 USD per 1M = 0.3 nano → rounds up to 1
    expect(costNano(3n, parseAtto('0.0001'), 1_000_000n)).toBe(1n);
    expect(costNano(0n, parseAtto('5'), 1n)).toBe(0n);
    // 20 credits at 6.25e-7 USD each
    expect(costNano(20n, parseAtto('6.25e-7'))).toBe(12_500n);
  });
});
