import { useQuery } from '@urql/preact';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import { AccountsPanel } from './operator/AccountsPanel.tsx';
import { OPERATOR_STATUS } from './operator/operator-operations.ts';
import { JobQueuePanel, UpstreamHealthPanel, UsagePanel } from './operator/StatusPanels.tsx';
import '../components/forms.css';

/** The operator's view (an operator token): every account, credits and debits, usage, upstreams, the job queue. */
export function Operator() {
  const [{ data, error, fetching }, refetch] = useQuery({ query: OPERATOR_STATUS });
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Operator</h1>
      <AccountsPanel />
      <h2>
        Server{' '}
        <button type="button" class="link" onClick={() => refetch({ requestPolicy: 'network-only' })}>
          Refresh
        </button>
      </h2>
      <ErrorNotice error={error} />
      {!data && fetching && <p class="muted">Loading…</p>}
      {data && (
        <>
          <h3>Usage across accounts</h3>
          <UsagePanel usage={data.operatorUsage} />
          <h3>Upstream health</h3>
          <UpstreamHealthPanel providers={data.operatorUpstreamHealth} />
          <h3>Job queue</h3>
          <JobQueuePanel queue={data.operatorJobQueue} />
        </>
      )}
    </section>
  );
}
