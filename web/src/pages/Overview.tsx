import { useQuery } from '@urql/preact';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import { TimeChart } from '../components/TimeChart.tsx';
import { useMemo } from 'preact/hooks';
import { graphql } from '../gql/index.ts';
import { formatAmount, sumDecimals } from '../lib/format.ts';

const OVERVIEW = graphql(`
  query Overview {
    balance {
      balances {
        usd
        diem
      }
      consumptionCurrency
      canConsume
    }
    usageAnalytics(lookback: "30d") {
      startDate
      endDate
      byDate {
        date
        usd
        diem
      }
    }
  }
`);

type Day = { readonly usd: string; readonly diem: string };

/** Spend over the last `days` days of `byDate` (oldest first, one entry per UTC day up to today). */
function spendOver(byDate: readonly Day[], days: number): Day {
  const last = byDate.slice(-days);
  return { usd: sumDecimals(last.map((day) => day.usd)), diem: sumDecimals(last.map((day) => day.diem)) };
}

function Stat({ label, usd, diem, id }: { label: string; usd: string; diem: string; id: string }) {
  return (
    <div class="stat" data-testid={id}>
      <h3>{label}</h3>
      <p class="figure">{formatAmount(usd, 'USD')}</p>
      <p class="muted">{formatAmount(diem, 'DIEM')}</p>
    </div>
  );
}

const usd = (value: number) => formatAmount(value, 'USD');

function DailySpend({ byDate }: { byDate: readonly (Day & { date: string })[] }) {
  const dates = useMemo(() => byDate.map((day) => day.date), [byDate]);
  const series = useMemo(() => [{ name: 'USD', values: byDate.map((day) => Number(day.usd)) }], [byDate]);
  return (
    <TimeChart
      title="Daily spend, last 30 days (USD)"
      dates={dates}
      series={series}
      format={usd}
      testId="daily-spend"
    />
  );
}

export function Overview() {
  const [result] = useQuery({ query: OVERVIEW });
  const { data, error, fetching } = result;
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Overview</h1>
      <ErrorNotice error={error} />
      {!data && fetching && <p class="muted">Loading…</p>}
      {data && (
        <>
          <h2>Balances</h2>
          <div class="stats">
            <Stat label="Balance" id="balance" usd={data.balance.balances.usd} diem={data.balance.balances.diem} />
            <div class="stat">
              <h3>Paying next</h3>
              <p class="figure">{data.balance.consumptionCurrency ?? '—'}</p>
              <p class="muted">{data.balance.canConsume ? 'Calls can be paid' : 'No balance can pay a call'}</p>
            </div>
          </div>
          <h2>Spend</h2>
          <div class="stats">
            <Stat label="Today" id="spend-today" {...spendOver(data.usageAnalytics.byDate, 1)} />
            <Stat label="Last 7 days" id="spend-7d" {...spendOver(data.usageAnalytics.byDate, 7)} />
            <Stat label="Last 30 days" id="spend-30d" {...spendOver(data.usageAnalytics.byDate, 30)} />
          </div>
          <DailySpend byDate={data.usageAnalytics.byDate} />
        </>
      )}
    </section>
  );
}
