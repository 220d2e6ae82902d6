/*
 * Keys: the account's active keys with their spend against their limits, a new key (secret shown once), a key's
 * limits and expiry, revoking, and the signed-in key's rate limits. Every operation is in ./keys/operations.ts.
 */
import './account-pages.css';
import { useMutation, useQuery } from '@urql/preact';
import { useState } from 'preact/hooks';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import type { KeysListQuery } from '../gql/graphql.ts';
import { typedErrorOf } from '../lib/errors.ts';
import { formatAmount, formatDate } from '../lib/format.ts';
import { CreateKey, EditKey } from './keys/KeyForms.tsx';
import { KEYS_LIST, KEYS_REVOKE } from './keys/operations.ts';

type ListedKey = KeysListQuery['apiKeys'][number];

/** "$1.20 of $5.00" with a meter, or "$1.20 (no limit)". */
function Spend({ spent, limit, currency }: { spent: string; limit?: string | null; currency: string }) {
  if (!limit) return <span>{formatAmount(spent, currency)} (no limit)</span>;
  return (
    <span class="spend">
      {formatAmount(spent, currency)} of {formatAmount(limit, currency)}
      <meter min={0} max={Number(limit)} value={Number(spent)} aria-label={`${currency} spent of limit`} />
    </span>
  );
}

function KeyRow({ apiKey, onChanged }: { apiKey: ListedKey; onChanged: () => void }) {
  const [editing, setEditing] = useState(false);
  const [revoke, revokeKey] = useMutation(KEYS_REVOKE);
  const limits = apiKey.consumptionLimits;
  const spent = apiKey.usage.currentPeriod;
  const onRevoke = async () => {
    if (!confirm(`Revoke the key "${apiKey.description}"? Calls with it stop at once.`)) return;
    const response = await revokeKey({ id: apiKey.id });
    if (response.data?.deleteApiKey.__typename === 'MutationDeleteApiKeySuccess') onChanged();
  };
  return (
    <li class="card key" data-testid={`key-${apiKey.id}`}>
      <div class="key-head">
        <h3>{apiKey.description || '(no description)'}</h3>
        <span class="muted">
          {apiKey.apiKeyType.toLowerCase()} · …{apiKey.last6Chars}
        </span>
      </div>
      <dl class="facts">
        <dt>Spent this {apiKey.limitPeriod.toLowerCase()} period</dt>
        <dd data-testid="key-spend">
          <Spend spent={spent.usd} limit={limits.usd} currency="USD" />
          {limits.diem && <Spend spent={spent.diem} limit={limits.diem} currency="DIEM" />}
        </dd>
        <dt>Last 7 days</dt>
        <dd>{formatAmount(apiKey.usage.trailingSevenDays.usd, 'USD')}</dd>
        <dt>Expires</dt>
        <dd>{apiKey.expiresAt ? formatDate(apiKey.expiresAt) : 'never'}</dd>
        <dt>Last used</dt>
        <dd>{apiKey.lastUsedAt ? formatDate(apiKey.lastUsedAt) : 'never'}</dd>
      </dl>
      <ErrorNotice error={revoke.error ?? typedErrorOf(revoke.data?.deleteApiKey)} />
      {editing ? (
        <EditKey
          apiKey={apiKey}
          onDone={(changed) => {
            setEditing(false);
            if (changed) onChanged();
          }}
        />
      ) : (
        <div class="actions">
          <button type="button" class="secondary" onClick={() => setEditing(true)}>
            Change limits
          </button>
          <button type="button" class="danger" onClick={() => void onRevoke()} disabled={revoke.fetching}>
            Revoke
          </button>
        </div>
      )}
    </li>
  );
}

function RateLimits({ status }: { status: KeysListQuery['rateLimits'] }) {
  return (
    <details class="card">
      <summary>
        Rate limits of this key (tier <code>{status.tierId}</code>)
      </summary>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Limits</th>
            </tr>
          </thead>
          <tbody>
            {status.models.map((model) => (
              <tr key={model.modelId}>
                <td>{model.modelId}</td>
                <td>{model.rateLimits.map((limit) => `${limit.amount} ${limit.type}`).join(' · ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}

export function Keys() {
  const [{ data, error, fetching }, refetch] = useQuery({ query: KEYS_LIST });
  const reload = () => refetch({ requestPolicy: 'network-only' });
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Keys</h1>
      <ErrorNotice error={error} />
      <CreateKey onChanged={reload} />
      <h2>Active keys</h2>
      {!data && fetching && <p class="muted">Loading…</p>}
      <ul class="keys">
        {data?.apiKeys.map((apiKey) => (
          <KeyRow key={apiKey.id} apiKey={apiKey} onChanged={reload} />
        ))}
      </ul>
      {data && <RateLimits status={data.rateLimits} />}
    </section>
  );
}
