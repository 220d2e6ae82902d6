import type { OperatorStatusQuery } from '../../gql/graphql.ts';
import { formatAmount, formatDate, sumDecimals } from '../../lib/format.ts';

const ms = (value: number | null | undefined) =>
  value === null || value === undefined ? '—' : `${Math.round(value)} ms`;

/** Per provider: state, latency and the latest errors, as this server process saw them. */
export function UpstreamHealthPanel({ providers }: { providers: OperatorStatusQuery['operatorUpstreamHealth'] }) {
  if (providers.length === 0) return <p class="muted">No upstream called since the server started.</p>;
  return (
    <div class="table-wrap">
      <table data-testid="upstream-health">
        <thead>
          <tr>
            <th>Provider</th>
            <th>State</th>
            <th>Latency (recent / last)</th>
            <th>Failures / calls</th>
            <th>Recent errors</th>
          </tr>
        </thead>
        <tbody>
          {providers.map((provider) => (
            <tr key={provider.providerId}>
              <td>
                <code>{provider.providerId}</code>
              </td>
              <td class={provider.state === 'HEALTHY' ? 'ok' : 'error'}>
                {provider.state === 'HEALTHY' ? 'Healthy' : 'Cooling down'}
                {provider.coolingDownUntil && ` until ${formatDate(provider.coolingDownUntil)}`}
              </td>
              <td>
                {ms(provider.recentLatencyMs)} / {ms(provider.lastLatencyMs)}
              </td>
              <td>
                {provider.failures} / {provider.calls}
              </td>
              <td>
                {provider.recentErrors.length === 0
                  ? '—'
                  : provider.recentErrors.slice(0, 3).map((failure) => (
                      <p key={failure.at} class="muted">
                        {formatDate(failure.at)} {failure.operation} {failure.outcome}: {failure.message}
                      </p>
                    ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Unfinished jobs of every account: depth per state and model, and how long the oldest has waited. */
export function JobQueuePanel({ queue }: { queue: OperatorStatusQuery['operatorJobQueue'] }) {
  const oldest = queue.oldestWaitingSeconds;
  return (
    <>
      <div class="stats">
        <div class="stat" data-testid="queue-queued">
          <h3>Queued</h3>
          <p class="figure">{queue.queued}</p>
        </div>
        <div class="stat">
          <h3>Processing</h3>
          <p class="figure">{queue.processing}</p>
        </div>
        <div class="stat">
          <h3>Oldest waiting</h3>
          <p class="figure">{oldest === null || oldest === undefined ? '—' : `${Math.round(oldest)} s`}</p>
        </div>
      </div>
      {queue.depth.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th>State</th>
                <th>Kind</th>
                <th>Model</th>
                <th>Jobs</th>
                <th>Oldest since</th>
              </tr>
            </thead>
            <tbody>
              {queue.depth.map((row) => (
                <tr key={`${row.status}-${row.kind}-${row.modelId}`}>
                  <td>{row.status}</td>
                  <td>{row.kind}</td>
                  <td>
                    <code>{row.modelId}</code>
                  </td>
                  <td>{row.jobs}</td>
                  <td>{formatDate(row.oldestCreatedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

/** Spend over every account for the last 30 days, and per model. */
export function UsagePanel({ usage }: { usage: OperatorStatusQuery['operatorUsage'] }) {
  const usd = sumDecimals(usage.byDate.map((day) => day.usd));
  const diem = sumDecimals(usage.byDate.map((day) => day.diem));
  return (
    <>
      <div class="stats">
        <div class="stat" data-testid="operator-spend-30d">
          <h3>
            All accounts, {usage.startDate} to {usage.endDate}
          </h3>
          <p class="figure">{formatAmount(usd, 'USD')}</p>
          <p class="muted">{formatAmount(diem, 'DIEM')}</p>
        </div>
      </div>
      {usage.byModel.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th>Model</th>
                <th>USD</th>
                <th>DIEM</th>
                <th>Units</th>
              </tr>
            </thead>
            <tbody>
              {usage.byModel.map((model) => (
                <tr key={model.modelName}>
                  <td>{model.modelName}</td>
                  <td>{formatAmount(model.totalUsd, 'USD')}</td>
                  <td>{formatAmount(model.totalDiem, 'DIEM')}</td>
                  <td>
                    {model.totalUnits.toLocaleString('en-US')} {model.unitType}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
