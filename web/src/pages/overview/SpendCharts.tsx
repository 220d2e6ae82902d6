import { useMemo, useState } from 'preact/hooks';
import { TimeChart } from '../../components/TimeChart.tsx';
import { formatAmount } from '../../lib/format.ts';

interface Series {
  readonly date: string;
  readonly values: readonly { readonly name: string; readonly usd: string; readonly diem: string }[];
}

interface SpendChartsProps {
  readonly byDate: readonly { readonly date: string; readonly usd: string; readonly diem: string }[];
  readonly byModelDaily: readonly Series[];
  readonly topModels: readonly string[];
  readonly byKeyDaily: readonly Series[];
  readonly topKeyNames: readonly string[];
}

type Side = 'usd' | 'diem';

function seriesOf(daily: readonly Series[], names: readonly string[], side: Side) {
  return names.map((name, index) => ({
    name,
    values: daily.map((day) => Number(day.values[index]?.[side] ?? 0)),
  }));
}

/** Daily spend, by model and by key (the top 8 of each), in USD or DIEM. */
export function SpendCharts({ byDate, byModelDaily, topModels, byKeyDaily, topKeyNames }: SpendChartsProps) {
  // Start on the currency most of the period was paid in.
  const [side, setSide] = useState<Side>(() => {
    const usd = byDate.reduce((sum, day) => sum + Math.abs(Number(day.usd)), 0);
    const diem = byDate.reduce((sum, day) => sum + Math.abs(Number(day.diem)), 0);
    return diem > usd ? 'diem' : 'usd';
  });
  const unit = side === 'usd' ? 'USD' : 'DIEM';
  const format = useMemo(() => (value: number) => formatAmount(value, unit), [unit]);
  const dates = useMemo(() => byDate.map((day) => day.date), [byDate]);
  const byModel = useMemo(() => seriesOf(byModelDaily, topModels, side), [byModelDaily, topModels, side]);
  const byKey = useMemo(() => seriesOf(byKeyDaily, topKeyNames, side), [byKeyDaily, topKeyNames, side]);
  return (
    <>
      <div class="row">
        <h2>Daily spend</h2>
        <label class="inline">
          Currency{' '}
          <select value={side} onChange={(event) => setSide(event.currentTarget.value as Side)}>
            <option value="usd">USD</option>
            <option value="diem">DIEM</option>
          </select>
        </label>
      </div>
      <div class="charts">
        <TimeChart title={`By model (${unit})`} dates={dates} series={byModel} format={format} testId="chart-model" />
        <TimeChart title={`By key (${unit})`} dates={dates} series={byKey} format={format} testId="chart-key" />
      </div>
    </>
  );
}
