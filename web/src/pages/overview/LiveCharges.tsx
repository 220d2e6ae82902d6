import { useSubscription } from '@urql/preact';
import { useEffect, useRef } from 'preact/hooks';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { graphql } from '../../gql/index.ts';
import type { OverviewLiveSubscription } from '../../gql/graphql.ts';
import { formatAmount, formatDate } from '../../lib/format.ts';

const LIVE = graphql(`
  subscription OverviewLive {
    usageUpdated {
      id
      amount
      currency
      modelId
      sku
      lineType
      timestamp
      apiKeyId
    }
  }
`);

type Charge = OverviewLiveSubscription['usageUpdated'];
const KEEP = 20;
/** Entries carry charges as negative amounts; shown as amounts spent (a refund reads negative). */
const spent = (amount: string) => (amount.startsWith('-') ? amount.slice(1) : `-${amount}`);

/** New charges as they settle (usageUpdated over graphql-sse), newest first; `onCharge` runs for each. */
export function LiveCharges({ onCharge }: { onCharge: () => void }) {
  const [{ data: charges, error }] = useSubscription<OverviewLiveSubscription, Charge[]>(
    { query: LIVE },
    (seen = [], event) => [event.usageUpdated, ...seen].slice(0, KEEP),
  );
  const latest = charges?.[0]?.id;
  const notify = useRef(onCharge);
  notify.current = onCharge;
  useEffect(() => {
    if (latest) notify.current();
  }, [latest]);
  return (
    <>
      <h2>Live charges</h2>
      <ErrorNotice error={error} />
      {!charges?.length ? (
        <p class="muted" data-testid="live-empty">
          Waiting for new charges… they appear here as calls are billed.
        </p>
      ) : (
        <div class="table-wrap">
          <table data-testid="live-charges" aria-live="polite">
            <caption class="sr-only">Charges made since this page opened, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When (UTC)</th>
                <th scope="col">Model</th>
                <th scope="col">Line</th>
                <th scope="col">Amount</th>
              </tr>
            </thead>
            <tbody>
              {charges.map((charge) => (
                <tr key={charge.id}>
                  <td>{formatDate(charge.timestamp)}</td>
                  <td>{charge.modelId ?? charge.sku}</td>
                  <td>{charge.lineType ?? '—'}</td>
                  <td>{formatAmount(spent(charge.amount), charge.currency)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
