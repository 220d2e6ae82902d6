import { useQuery } from '@urql/preact';
import { useState } from 'preact/hooks';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import type { OperatorAccountsListQuery, OperatorAdjustmentFieldsFragment } from '../../gql/graphql.ts';
import { formatAmount, formatDate } from '../../lib/format.ts';
import { AdjustForm } from './AdjustForm.tsx';
import { OPERATOR_ACCOUNTS } from './operator-operations.ts';

type Amounts = readonly { readonly currency: string; readonly amount: string }[];

function Amounts({ amounts }: { amounts: Amounts }) {
  const shown = amounts.filter((entry) => Number(entry.amount) !== 0);
  if (shown.length === 0) return <>{formatAmount('0', 'USD')}</>;
  return <>{shown.map((entry) => formatAmount(entry.amount, entry.currency)).join(' · ')}</>;
}

/** The ledger entries the operator made in this visit, as the API recorded them. */
function Adjustments({ list }: { list: readonly OperatorAdjustmentFieldsFragment[] }) {
  if (list.length === 0) return null;
  return (
    <div class="table-wrap">
      <table data-testid="adjustments">
        <caption>Ledger entries made now</caption>
        <thead>
          <tr>
            <th>Entry</th>
            <th>Amount</th>
            <th>Balance after</th>
            <th>Reason</th>
          </tr>
        </thead>
        <tbody>
          {list.map((entry) => (
            <tr key={entry.ledgerEntryId}>
              <td>
                <code>{entry.ledgerEntryId}</code>
              </td>
              <td>{formatAmount(entry.amount, entry.currency)}</td>
              <td>{formatAmount(entry.balanceAfter, entry.currency)}</td>
              <td>{entry.reason}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

type AccountRow = OperatorAccountsListQuery['operatorAccounts']['edges'][number]['node'];

function AccountsTable({
  accounts,
  onPick,
}: {
  accounts: readonly AccountRow[];
  onPick: (account: { id: string; name: string }) => void;
}) {
  return (
    <div class="table-wrap">
      <table data-testid="operator-accounts">
        <thead>
          <tr>
            <th>Account</th>
            <th>Balance</th>
            <th>Spend today</th>
            <th>Spend 30 days</th>
            <th>Keys</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {accounts.map((node) => (
            <tr key={node.id} data-account-id={node.id}>
              <td>
                <strong>{node.name}</strong>
                <br />
                <span class="muted">
                  {node.kind} · <code>{node.walletAddress ?? node.id}</code> · since {formatDate(node.createdAt)}
                </span>
              </td>
              <td data-testid="account-balance">
                <Amounts amounts={node.balances} />
              </td>
              <td>
                <Amounts amounts={node.spendToday} />
              </td>
              <td>
                <Amounts amounts={node.spendLast30Days} />
              </td>
              <td>{node.activeKeyCount}</td>
              <td>
                <button type="button" onClick={() => onPick({ id: node.id, name: node.name })}>
                  Adjust {node.name}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Every account: search, balances and spend, and a credit or debit with a reason for the one picked. */
export function AccountsPanel() {
  const [search, setSearch] = useState('');
  const [applied, setApplied] = useState<string>();
  const [after, setAfter] = useState<string>();
  const [picked, setPicked] = useState<{ id: string; name: string }>();
  const [adjustments, setAdjustments] = useState<OperatorAdjustmentFieldsFragment[]>([]);
  const [{ data, error, fetching }, refetch] = useQuery({
    query: OPERATOR_ACCOUNTS,
    variables: { search: applied, after },
  });
  const submit = (event: Event) => {
    event.preventDefault();
    setAfter(undefined);
    setApplied(search.trim() || undefined);
  };
  const adjusted = (adjustment: OperatorAdjustmentFieldsFragment) => {
    setAdjustments((list) => [adjustment, ...list]);
    refetch({ requestPolicy: 'network-only' });
  };
  const connection = data?.operatorAccounts;
  return (
    <>
      <h2>Accounts</h2>
      <form class="search" role="search" onSubmit={submit}>
        <label for="account-search">Search accounts</label>
        <input
          id="account-search"
          placeholder="id, name, wallet address or key"
          value={search}
          onInput={(event) => setSearch(event.currentTarget.value)}
        />
        <button type="submit">Search</button>
      </form>
      <ErrorNotice error={error} />
      {!data && fetching && <p class="muted">Loading…</p>}
      {connection && connection.edges.length === 0 && <p class="muted">No account matches.</p>}
      {connection && connection.edges.length > 0 && (
        <AccountsTable accounts={connection.edges.map((edge) => edge.node)} onPick={setPicked} />
      )}
      {connection?.pageInfo.hasNextPage && (
        <button type="button" class="link" onClick={() => setAfter(connection.pageInfo.endCursor ?? undefined)}>
          Next page
        </button>
      )}
      {picked && <AdjustForm key={picked.id} account={picked} onDone={adjusted} />}
      <Adjustments list={adjustments} />
    </>
  );
}
