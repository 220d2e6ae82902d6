/*
 * Usage: the account's usage entries over the Relay connection (`usage`), filtered by dates, key, model and kind,
 * a page at a time, and the filtered range as CSV (read page by page, ./usage/export.ts).
 */
import './account-pages.css';
import { useClient, useQuery } from '@urql/preact';
import { useState } from 'preact/hooks';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import type { UsageFilter } from '../gql/graphql.ts';
import { downloadText } from '../lib/csv.ts';
import { formatAmount, formatDate } from '../lib/format.ts';
import { exportUsageCsv, type UsageRow } from './usage/export.ts';
import { UsageFilters } from './usage/Filters.tsx';
import { USAGE_PAGE } from './usage/operations.ts';

const PAGE_SIZE = 50;

function UsageTable({ rows }: { rows: readonly UsageRow[] }) {
  return (
    <div class="table-wrap">
      <table data-testid="usage-table">
        <thead>
          <tr>
            <th scope="col">Time (UTC)</th>
            <th scope="col">Model</th>
            <th scope="col">Kind</th>
            <th scope="col">Line</th>
            <th scope="col">Units</th>
            <th scope="col">Amount</th>
            <th scope="col">Key</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.id}>
              <td>{formatDate(row.timestamp)}</td>
              <td>{row.modelId ?? row.sku}</td>
              <td>{row.modelType ?? '—'}</td>
              <td>{row.lineType ?? '—'}</td>
              <td>{row.units}</td>
              <td>{formatAmount(row.amount, row.currency)}</td>
              <td>{row.apiKey?.description ?? row.apiKeyId ?? 'web'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function CsvExport({ filter }: { filter: UsageFilter }) {
  const client = useClient();
  const [state, setState] = useState<{ busy: boolean; error?: Error; done?: number }>({ busy: false });
  const run = async () => {
    setState({ busy: true });
    try {
      const { csv, rows } = await exportUsageCsv(client, filter);
      downloadText(`lagoon-usage-${new Date().toISOString().slice(0, 10)}.csv`, csv);
      setState({ busy: false, done: rows });
    } catch (error) {
      setState({ busy: false, error: error instanceof Error ? error : new Error(String(error)) });
    }
  };
  return (
    <div class="actions">
      <button type="button" class="secondary" onClick={() => void run()} disabled={state.busy}>
        {state.busy ? 'Exporting…' : 'Export CSV'}
      </button>
      {state.done !== undefined && <span class="muted">{state.done} entries exported.</span>}
      {state.error && (
        <p class="error" role="alert">
          The export failed: {state.error.message}
        </p>
      )}
    </div>
  );
}

export function Usage() {
  const [filter, setFilter] = useState<UsageFilter>({});
  // The cursors of the pages before this one (the first page has none), so "Previous" goes back exactly.
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const after = cursors.at(-1) ?? null;
  const [{ data, error, fetching }] = useQuery({ query: USAGE_PAGE, variables: { filter, first: PAGE_SIZE, after } });
  const usage = data?.usage;
  const page = cursors.length;
  const pages = usage ? Math.max(1, Math.ceil(usage.totalCount / PAGE_SIZE)) : 1;
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Usage</h1>
      <UsageFilters
        onApply={(next) => {
          setFilter(next);
          setCursors([null]);
        }}
      />
      <ErrorNotice error={error} />
      <div class="toolbar">
        <p data-testid="usage-count">{usage ? `${usage.totalCount} entries` : fetching ? 'Loading…' : ''}</p>
        <CsvExport filter={filter} />
      </div>
      {usage && <UsageTable rows={usage.edges.map((edge) => edge.node)} />}
      <nav class="pager" aria-label="Usage pages">
        <button type="button" class="secondary" disabled={page <= 1} onClick={() => setCursors(cursors.slice(0, -1))}>
          Previous
        </button>
        <span>
          Page {page} of {pages}
        </span>
        <button
          type="button"
          class="secondary"
          disabled={!usage?.pageInfo.hasNextPage}
          onClick={() => usage?.pageInfo.endCursor && setCursors([...cursors, usage.pageInfo.endCursor])}
        >
          Next
        </button>
      </nav>
    </section>
  );
}
