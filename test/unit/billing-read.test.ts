import { describe, expect, it } from 'vitest';
import { addDecimals, daysBetween } from '../../src/billing/analytics.assemble.ts';
import { contractModelType, contractUnit, lineUnit, modelUnit } from '../../src/billing/analytics.units.ts';
import { resolveRange } from '../../src/billing/analytics.service.ts';
import { isoToMicros, windowBounds } from '../../src/billing/usage.inputs.ts';
import { dayOfMicros, locatePage, microsToIso, planCount } from '../../src/billing/usage-range.ts';
import { prefersCsv } from '../../rest/routes/billing-wire.ts';

const us = (iso: string) => isoToMicros(iso);

describe('billing read side helpers', () => {
  it('should keep microseconds exact both ways', () => {
    expect(us('2025-01-02T03:04:05.123456Z')).toBe(1735787045123456n);
    expect(microsToIso(1735787045123456n)).toBe('2025-01-02T03:04:05.123456Z');
    expect(us('2025-01-02T05:04:05.5+02:00')).toBe(us('2025-01-02T03:04:05.500Z'));
    expect(dayOfMicros(us('2025-01-02T23:59:59.999999Z'))).toBe('2025-01-02');
  });

  it('should turn inclusive end bounds into exclusive ones', () => {
    expect(windowBounds('2025-01-01', '2025-01-02')).toEqual({
      from: us('2025-01-01T00:00:00Z'),
      until: us('2025-01-03T00:00:00Z'),
    });
    expect(windowBounds(undefined, '2025-01-02T10:00:00Z')).toEqual({ until: us('2025-01-02T10:00:00Z') + 1n });
  });

  it('should count partial edge days exactly and whole days from the rollups', () => {
    expect(planCount({})).toEqual({ exact: [], rollupDays: {} });
    const plan = planCount({ from: us('2025-01-01T12:00:00Z'), until: us('2025-01-05T06:00:00Z') });
    expect(plan.exact.map((part) => part.day)).toEqual(['2025-01-01', '2025-01-05']);
    expect(plan.exact[0]?.window.until).toBe(us('2025-01-02T00:00:00Z'));
    expect(plan.exact[1]?.window.from).toBe(us('2025-01-05T00:00:00Z'));
    expect(plan.rollupDays).toEqual({ afterDay: '2025-01-01', beforeDay: '2025-01-05' });
    expect(
      planCount({ from: us('2025-01-01T12:00:00Z'), until: us('2025-01-02T06:00:00Z') }).rollupDays,
    ).toBeUndefined();
    expect(planCount({ from: us('2025-01-01T12:00:00Z'), until: us('2025-01-01T13:00:00Z') }).exact).toHaveLength(1);
  });

  it('should locate the day a page starts in, in either order', () => {
    const days = [
      { day: '2025-01-01', total: 3, diem: 0 },
      { day: '2025-01-02', total: 5, diem: 0 },
      { day: '2025-01-03', total: 2, diem: 0 },
    ];
    expect(locatePage({}, days, 'desc', 0)).toEqual({ window: { until: us('2025-01-04T00:00:00Z') }, skip: 0 });
    expect(locatePage({}, days, 'desc', 6)).toEqual({ window: { until: us('2025-01-03T00:00:00Z') }, skip: 4 });
    expect(locatePage({}, days, 'asc', 3)).toEqual({ window: { from: us('2025-01-02T00:00:00Z') }, skip: 0 });
    expect(locatePage({ from: us('2025-01-02T12:00:00Z') }, days, 'asc', 3)).toEqual({
      window: { from: us('2025-01-02T12:00:00Z') },
      skip: 0,
    });
    expect(locatePage({}, days, 'asc', 10)).toBeUndefined();
  });

  it('should add decimals exactly and map model types to the contract', () => {
    expect(addDecimals('0.1', '0.2')).toBe('0.3');
    expect(addDecimals('1200', '0.000000000001')).toBe('1200.000000000001');
    expect(addDecimals('0', '0')).toBe('0');
    // Only values from the lists: LLM, IMAGE, TTS, ASR, VIDEO and tokens, images, chars, minutes, seconds.
    expect(
      ['LLM', 'text', 'image', 'tts', 'ASR', 'video', 'AUGMENT', 'music', 'RPC', ''].map(contractModelType),
    ).toEqual(['LLM', 'LLM', 'IMAGE', 'TTS', 'ASR', 'VIDEO', 'LLM', 'TTS', 'LLM', 'LLM']);
    expect(['tokens', 'images', 'characters', 'seconds', 'minutes', 'requests', 'credits'].map(contractUnit)).toEqual([
      'tokens',
      'images',
      'chars',
      'seconds',
      'minutes',
      null,
      null,
    ]);
    expect([
      modelUnit('LLM', 'requests'),
      modelUnit('LLM', 'credits'),
      modelUnit('TTS', 'seconds'),
      modelUnit('IMAGE', ''),
    ]).toEqual(['tokens', 'tokens', 'seconds', 'images']);
    expect([lineUnit('Input', 'tokens'), lineUnit('Web Search', 'tokens'), lineUnit('Request', 'requests')]).toEqual([
      'tokens',
      null,
      null,
    ]);
  });

  it('should resolve analytics ranges in UTC days', () => {
    const now = new Date('2026-03-01T01:00:00Z');
    expect(resolveRange({}, now)).toEqual({ lookback: '7d', startDay: '2026-02-23', endDay: '2026-03-01' });
    expect(resolveRange({ lookback: '1d' }, now)).toEqual({
      lookback: '1d',
      startDay: '2026-03-01',
      endDay: '2026-03-01',
    });
    expect(resolveRange({ startDate: '2026-01-01', endDate: '2026-01-31' }, now)).toEqual({
      lookback: '2026-01-01:2026-01-31',
      startDay: '2026-01-01',
      endDay: '2026-01-31',
    });
    expect(daysBetween('2024-02-28', '2024-03-01')).toEqual(['2024-02-28', '2024-02-29', '2024-03-01']);
  });

  it('should pick CSV only when the Accept header prefers it', () => {
    expect(prefersCsv(null)).toBe(false);
    expect(prefersCsv('*/*')).toBe(false);
    expect(prefersCsv('text/csv')).toBe(true);
    expect(prefersCsv('application/json, text/csv')).toBe(false);
    expect(prefersCsv('text/csv, application/json')).toBe(true);
    expect(prefersCsv('application/json;q=0.5, text/csv;q=0.9')).toBe(true);
    expect(prefersCsv('text/csv;q=0')).toBe(false);
  });
});
