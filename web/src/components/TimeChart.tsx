import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  readonly name: string;
  readonly values: readonly number[];
}

interface TimeChartProps {
  /** What the chart shows, for its caption and for screen readers. */
  readonly title: string;
  /** One ISO date-time per point (UTC days). */
  readonly dates: readonly string[];
  readonly series: readonly ChartSeries[];
  /** Formats a value on the axis and in the legend. */
  readonly format: (value: number) => string;
  readonly testId?: string;
}

/** Colours told apart with the common colour-vision deficiencies (Okabe–Ito). */
const COLOURS = ['#0072b2', '#e69f00', '#009e73', '#cc79a7', '#56b4e9', '#d55e00', '#f0e442', '#000000', '#999999'];
const HEIGHT = 260;

/** A time series chart (uPlot, canvas): one line per series, sized to its container as that changes. */
export function TimeChart({ title, dates, series, format, testId }: TimeChartProps) {
  const holder = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = holder.current;
    if (!element) return;
    const data: uPlot.AlignedData = [
      dates.map((date) => Date.parse(date) / 1000),
      ...series.map((one) => [...one.values]),
    ];
    const options: uPlot.Options = {
      width: Math.max(200, element.clientWidth),
      height: HEIGHT,
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      scales: { x: { time: true } },
      axes: [{}, { values: (_u, values) => values.map(format), size: 70 }],
      series: [
        { label: 'Day', value: (_u, ts) => (ts == null ? '' : new Date(ts * 1000).toISOString().slice(0, 10)) },
        ...series.map((one, index) => ({
          label: one.name,
          stroke: COLOURS[index % COLOURS.length],
          width: 2,
          points: { show: true, size: 5 },
          value: (_u: uPlot, value: number | null) => (value == null ? '' : format(value)),
        })),
      ],
    };
    const chart = new uPlot(options, data, element);
    const observer = new ResizeObserver(() =>
      chart.setSize({ width: Math.max(200, element.clientWidth), height: HEIGHT }),
    );
    observer.observe(element);
    return () => {
      observer.disconnect();
      chart.destroy();
    };
  }, [dates, series, format]);
  const summary = series.map((one) => `${one.name}: ${format(one.values.reduce((a, b) => a + b, 0))}`).join(', ');
  return (
    <figure class="chart" data-testid={testId}>
      <figcaption>{title}</figcaption>
      <div ref={holder} role="img" aria-label={`${title}. Totals: ${summary || 'none'}.`} />
    </figure>
  );
}
