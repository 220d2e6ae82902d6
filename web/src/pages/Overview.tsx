import { useQuery } from '@urql/preact';
import { useCallback, useEffect, useRef } from 'preact/hooks';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import { graphql } from '../gql/index.ts';
import { formatAmount, sumDecimals } from '../lib/format.ts';
import { LiveCharges } from './overview/LiveCharges.tsx';
import { SpendCharts } from './overview/SpendCharts.tsx';
import { TopModels } from './overview/TopModels.tsx';

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
      byModel {
        modelName
        modelType
        totalUsd
        totalDiem
        totalUnits
        unitType
      }
      topModels
      byModelDaily {
        date
        values {
          name
          usd
          diem
        }
      }
      topKeyNames
      byKeyDaily {
        date
        values {
          name
          usd
          diem
        }
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

/** After a live charge, the figures are read again, at most once a second however many charges arrive. */
function useRefreshAfterCharges(refetch: () => void): () => void {
  const timer = useRef<number | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  return useCallback(() => {
    if (timer.current !== undefined) return;
    timer.current = window.setTimeout(() => {
      timer.current = undefined;
      refetch();
    }, 1000);
  }, [refetch]);
}

export function Overview() {
  const [{ data, error, fetching }, reexecute] = useQuery({ query: OVERVIEW });
  const refetch = useCallback(() => reexecute({ requestPolicy: 'network-only' }), [reexecute]);
  const onCharge = useRefreshAfterCharges(refetch);
  const analytics = data?.usageAnalytics;
  return (
    <section aria-labelledby="page-title" aria-busy={fetching}>
      <h1 id="page-title">Overview</h1>
      <ErrorNotice error={error} />
      {!data && fetching && <p class="muted">Loading…</p>}
      {data && analytics && (
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
          <p class="muted">
            Spend figures, charts and top models may be up to 10 minutes old (the API caches usage analytics); new
            charges appear below as they are billed, and the balance is read again after each.
          </p>
          <div class="stats">
            <Stat label="Today" id="spend-today" {...spendOver(analytics.byDate, 1)} />
            <Stat label="Last 7 days" id="spend-7d" {...spendOver(analytics.byDate, 7)} />
            <Stat label="Last 30 days" id="spend-30d" {...spendOver(analytics.byDate, 30)} />
          </div>
          <SpendCharts {...analytics} />
          <h2>Top models</h2>
          <TopModels models={analytics.byModel} />
        </>
      )}
      {data && <LiveCharges onCharge={onCharge} />}
    </section>
  );
}
