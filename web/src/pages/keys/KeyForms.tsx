/* The Keys page's forms: a new key (its secret shown once) and a key's limits and expiry. */
import { useMutation } from '@urql/preact';
import { useState } from 'preact/hooks';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import type { LimitPeriod } from '../../gql/graphql.ts';
import { typedErrorOf } from '../../lib/errors.ts';
import { KEYS_CREATE, KEYS_UPDATE } from './operations.ts';

const PERIODS: readonly LimitPeriod[] = ['EPOCH', 'MONTH', 'LIFETIME'];

/** The limit fields as the API takes them: an empty box is "no limit". */
function limitsOf(form: FormData) {
  const text = (name: string) => String(form.get(name) ?? '').trim();
  return {
    consumptionLimit: { usd: text('usd') || null, diem: text('diem') || null },
    limitPeriod: text('period') as LimitPeriod,
    expiresAt: text('expires'),
  };
}

interface LimitFieldsProps {
  readonly idPrefix: string;
  readonly usd?: string | null | undefined;
  readonly diem?: string | null | undefined;
  readonly period?: LimitPeriod | undefined;
  readonly expires?: string | null | undefined;
}

function LimitFields({ idPrefix, usd, diem, period, expires }: LimitFieldsProps) {
  return (
    <div class="form-grid">
      <div>
        <label for={`${idPrefix}-usd`}>USD limit</label>
        <input id={`${idPrefix}-usd`} name="usd" inputMode="decimal" placeholder="none" defaultValue={usd ?? ''} />
      </div>
      <div>
        <label for={`${idPrefix}-diem`}>DIEM limit</label>
        <input id={`${idPrefix}-diem`} name="diem" inputMode="decimal" placeholder="none" defaultValue={diem ?? ''} />
      </div>
      <div>
        <label for={`${idPrefix}-period`}>Limit period</label>
        <select id={`${idPrefix}-period`} name="period" defaultValue={period ?? 'EPOCH'}>
          {PERIODS.map((value) => (
            <option key={value} value={value}>
              {value.toLowerCase()}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label for={`${idPrefix}-expires`}>Expires on</label>
        <input id={`${idPrefix}-expires`} name="expires" type="date" defaultValue={expires?.slice(0, 10) ?? ''} />
      </div>
    </div>
  );
}

function NewSecret({ secret, onDone }: { secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  const copy = () => {
    void navigator.clipboard.writeText(secret).then(() => setCopied(true));
  };
  return (
    <div class="card secret" role="status">
      <p>Store this key now: it is shown only once.</p>
      <code data-testid="new-secret">{secret}</code>
      <div class="actions">
        <button type="button" onClick={copy}>
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" class="secondary" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}

/** Creates a key; the secret lives in this component's state only, so a reload forgets it. */
export function CreateKey({ onChanged }: { onChanged: () => void }) {
  const [result, create] = useMutation(KEYS_CREATE);
  const [secret, setSecret] = useState<string>();
  const outcome = result.data?.createApiKey;
  const submit = async (event: Event) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const { expiresAt, ...limits } = limitsOf(form);
    const response = await create({
      input: {
        description: String(form.get('description') ?? ''),
        apiKeyType: form.get('type') === 'ADMIN' ? 'ADMIN' : 'INFERENCE',
        expiresAt: expiresAt || null,
        ...limits,
      },
    });
    const created = response.data?.createApiKey;
    if (created?.__typename === 'MutationCreateApiKeySuccess') {
      setSecret(created.data.secret);
      formElement.reset();
      onChanged();
    }
  };
  return (
    <section class="card" aria-labelledby="create-key">
      <h2 id="create-key">Create a key</h2>
      {secret && <NewSecret secret={secret} onDone={() => setSecret(undefined)} />}
      <form onSubmit={submit}>
        <div class="form-grid">
          <div>
            <label for="new-description">Description</label>
            <input id="new-description" name="description" maxLength={64} required />
          </div>
          <div>
            <label for="new-type">Type</label>
            <select id="new-type" name="type">
              <option value="INFERENCE">inference</option>
              <option value="ADMIN">admin</option>
            </select>
          </div>
        </div>
        <LimitFields idPrefix="new" />
        <ErrorNotice error={result.error ?? typedErrorOf(outcome)} />
        <button type="submit" disabled={result.fetching}>
          Create key
        </button>
      </form>
    </section>
  );
}

export interface EditableKey {
  readonly id: string;
  readonly description: string;
  readonly expiresAt?: string | null;
  readonly limitPeriod: LimitPeriod;
  readonly consumptionLimits: { readonly usd?: string | null; readonly diem?: string | null };
}

/** Changes a key's limits and expiry; closes when the API accepts. */
export function EditKey({ apiKey, onDone }: { apiKey: EditableKey; onDone: (changed: boolean) => void }) {
  const [result, update] = useMutation(KEYS_UPDATE);
  const submit = async (event: Event) => {
    event.preventDefault();
    const response = await update({
      input: { id: apiKey.id, ...limitsOf(new FormData(event.currentTarget as HTMLFormElement)) },
    });
    if (response.data?.updateApiKey.__typename === 'MutationUpdateApiKeySuccess') onDone(true);
  };
  return (
    <form class="card" onSubmit={submit} aria-label={`Limits of ${apiKey.description}`}>
      <LimitFields
        idPrefix={`edit-${apiKey.id}`}
        usd={apiKey.consumptionLimits.usd}
        diem={apiKey.consumptionLimits.diem}
        period={apiKey.limitPeriod}
        expires={apiKey.expiresAt}
      />
      <ErrorNotice error={result.error ?? typedErrorOf(result.data?.updateApiKey)} />
      <div class="actions">
        <button type="submit" disabled={result.fetching}>
          Save limits
        </button>
        <button type="button" class="secondary" onClick={() => onDone(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}
