import type { DailyRow, DayTotalRow, KeyTotalRow, ModelTotalRow } from './analytics.repository.ts';
import type {
  AnalyticsUnitType,
  DailySeries,
  KeyUsage,
  ModelUsage,
  SpendTotals,
  UsageAnalytics,
} from './analytics.types.ts';
import { contractModelType, lineUnit, modelUnit } from './analytics.units.ts';
import { formatScaled, type Nano } from './money.ts';

/* Turns the rollup aggregates into the analytics response (pure; money stays bigint, units exact text). */

export const TOP_SERIES = 8;
export const WEB_APP = 'Web App';
const LINE_ORDER = ['Input', 'Output', 'Cache Read', 'Cache Write'];

export interface AnalyticsRange {
  readonly lookback: string;
  readonly startDay: string;
  readonly endDay: string;
}

export interface AnalyticsRows {
  readonly models: readonly ModelTotalRow[];
  readonly keys: readonly KeyTotalRow[];
  readonly days: readonly DayTotalRow[];
  readonly dailyModels: readonly DailyRow[];
  readonly dailyKeys: readonly DailyRow[];
  readonly keyLabels: readonly { readonly id: string; readonly description: string; readonly last6: string }[];
}

/** Exact sum of two decimal strings of any scale ("1.5" + "0.25" = "1.75"). */
export function addDecimals(a: string, b: string): string {
  const scale = Math.max(fractionOf(a).length, fractionOf(b).length);
  return formatScaled(scaled(a, scale) + scaled(b, scale), scale);
}
const fractionOf = (value: string) => value.split('.')[1] ?? '';
const scaled = (value: string, scale: number) => {
  const [whole = '0', fraction = ''] = value.split('.');
  return BigInt(`${whole}${fraction.padEnd(scale, '0')}`);
};

/** Which side of the usd/diem split a currency counts on (VCU is the legacy DIEM, credits are USD-priced). */
const sideOf = (currency: string): 'usd' | 'diem' => (currency === 'DIEM' || currency === 'VCU' ? 'diem' : 'usd');

/** Spend per side, and units: all of them (a breakdown line), or per listed unit (a model, a key). */
class Totals {
  usd = 0n;
  diem = 0n;
  units = '0';
  readonly byUnit = new Map<AnalyticsUnitType, string>();
  add(currency: string, amount: Nano, units: string, unit?: AnalyticsUnitType | null): void {
    if (sideOf(currency) === 'diem') this.diem += amount;
    else this.usd += amount;
    this.units = addDecimals(this.units, units);
    if (unit) this.byUnit.set(unit, addDecimals(this.byUnit.get(unit) ?? '0', units));
  }
  /** Units in one unit type. */
  unitsIn(unit: AnalyticsUnitType): string {
    return this.byUnit.get(unit) ?? '0';
  }
  /** Units in every listed unit type (what a key's total counts). */
  listedUnits(): string {
    return [...this.byUnit.values()].reduce(addDecimals, '0');
  }
  get spend(): Nano {
    return this.usd + this.diem;
  }
  toJSON(): SpendTotals {
    return { usd: this.usd, diem: this.diem, units: this.units };
  }
}

const bySpend = <T extends { spend: Nano; name: string }>(a: T, b: T) =>
  a.spend === b.spend ? a.name.localeCompare(b.name) : a.spend > b.spend ? -1 : 1;

function modelUsage(rows: readonly ModelTotalRow[]): ModelUsage[] {
  const models = new Map<
    string,
    { name: string; spend: Nano; totals: Totals; lines: Map<string, Totals>; kinds: Map<string, Nano> }
  >();
  for (const row of rows) {
    // A usage record without a model is named after its model type (e.g. AUGMENT).
    const name = row.modelId || row.modelType || 'Other';
    const model = models.get(name) ?? { name, spend: 0n, totals: new Totals(), lines: new Map(), kinds: new Map() };
    model.totals.add(row.currency, row.amount, row.units, lineUnit(row.lineType, row.unitType));
    model.spend = model.totals.spend;
    const line = model.lines.get(row.lineType) ?? new Totals();
    line.add(row.currency, row.amount, row.units);
    model.lines.set(row.lineType, line);
    const kind = `${row.modelType}\u0000${row.unitType}`;
    model.kinds.set(kind, (model.kinds.get(kind) ?? 0n) + row.amount);
    models.set(name, model);
  }
  return [...models.values()].sort(bySpend).map((model) => {
    // A model reported under several model or unit types takes the one it spent most on.
    const [kind = '\u0000'] = [...model.kinds.entries()]
      .sort((a, b) => (a[1] === b[1] ? 0 : a[1] > b[1] ? -1 : 1))
      .map(([k]) => k);
    const [rawModelType = '', rawUnitType = ''] = kind.split('\u0000');
    const modelType = contractModelType(rawModelType);
    const unitType = modelUnit(modelType, rawUnitType);
    const lines = [...model.lines.entries()].sort(([a], [b]) => lineRank(a) - lineRank(b) || a.localeCompare(b));
    return {
      modelName: model.name,
      unitType,
      modelType,
      ...model.totals.toJSON(),
      units: model.totals.unitsIn(unitType),
      ...(lines.length > 1 && {
        breakdown: lines.map(([type, totals]) => ({ type: type || 'Other', ...totals.toJSON() })),
      }),
    };
  });
}

const lineRank = (type: string) => {
  const rank = LINE_ORDER.indexOf(type);
  return rank < 0 ? LINE_ORDER.length : rank;
};

function keyUsage(rows: readonly KeyTotalRow[], labels: AnalyticsRows['keyLabels']): (KeyUsage & { label: string })[] {
  const keys = new Map<string, { name: string; spend: Nano; totals: Totals }>();
  for (const row of rows) {
    const key = keys.get(row.apiKeyId) ?? { name: row.apiKeyId, spend: 0n, totals: new Totals() };
    key.totals.add(row.currency, row.amount, row.units, lineUnit(row.lineType, row.unitType));
    key.spend = key.totals.spend;
    keys.set(row.apiKeyId, key);
  }
  const labelOf = new Map(labels.map((label) => [label.id, label]));
  const sorted = [...keys.values()].sort(bySpend);
  const descriptions = sorted.map((key) =>
    key.name === '' ? WEB_APP : (labelOf.get(key.name)?.description ?? 'Deleted key'),
  );
  return sorted.map((key, index) => {
    const description = descriptions[index] ?? '';
    const shared = descriptions.filter((d) => d === description).length > 1;
    const last6 = labelOf.get(key.name)?.last6;
    return {
      apiKeyId: key.name === '' ? null : key.name,
      description,
      label: shared && last6 ? `${description} (…${last6})` : description,
      ...key.totals.toJSON(),
      units: key.totals.listedUnits(),
    };
  });
}

/** Every UTC day from start to end, inclusive. */
export function daysBetween(startDay: string, endDay: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(`${startDay}T00:00:00Z`); t <= Date.parse(`${endDay}T00:00:00Z`); t += 86_400_000)
    days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

function series(
  days: readonly string[],
  rows: readonly DailyRow[],
  names: readonly { id: string; label: string }[],
): DailySeries[] {
  const spend = new Map(rows.map((row) => [`${row.day}\u0000${row.name}`, row]));
  return days.map((date) => ({
    date,
    values: names.map(({ id, label }) => {
      const row = spend.get(`${date}\u0000${id}`);
      return { name: label, diem: row?.diem ?? 0n, usd: row?.usd ?? 0n };
    }),
  }));
}

export function assembleAnalytics(range: AnalyticsRange, rows: AnalyticsRows): UsageAnalytics {
  const days = daysBetween(range.startDay, range.endDay);
  const byModel = modelUsage(rows.models);
  const keys = keyUsage(rows.keys, rows.keyLabels);
  const topModels = byModel
    .slice(0, TOP_SERIES)
    .map((model) => ({ id: model.modelName === 'Other' ? '' : model.modelName, label: model.modelName }));
  const topKeys = keys.slice(0, TOP_SERIES).map((key) => ({ id: key.apiKeyId ?? '', label: key.label }));
  const perDay = new Map<string, { usd: Nano; diem: Nano }>();
  for (const row of rows.days) {
    const day = perDay.get(row.day) ?? { usd: 0n, diem: 0n };
    perDay.set(
      row.day,
      sideOf(row.currency) === 'diem' ? { ...day, diem: day.diem + row.amount } : { ...day, usd: day.usd + row.amount },
    );
  }
  return {
    lookback: range.lookback,
    startDay: range.startDay,
    endDay: range.endDay,
    byDate: days.map((date) => ({ date, usd: perDay.get(date)?.usd ?? 0n, diem: perDay.get(date)?.diem ?? 0n })),
    byModel,
    byModelDaily: series(days, rows.dailyModels, topModels),
    topModels: topModels.map((model) => model.label),
    byKey: keys.map(({ label: _label, ...key }) => key),
    byKeyDaily: series(days, rows.dailyKeys, topKeys),
    topKeyNames: topKeys.map((key) => key.label),
  };
}
