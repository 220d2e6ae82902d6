/* The Usage page's filter form: dates, key, model and kind; applied on submit. */
import { useQuery } from '@urql/preact';
import type { UsageFilter } from '../../gql/graphql.ts';
import { USAGE_FILTER_CHOICES } from './operations.ts';

/**
 * The kinds usage entries record in `modelType` (set by each product's pricing, e.g. src/chat/chat-pricing.ts,
 * src/media/images/edit-pricing.ts, src/crypto-rpc/rpc-proxy.service.ts), not the catalog's lowercase model types.
 */
const USAGE_KINDS = [
  'LLM',
  'IMAGE',
  'UPSCALE',
  'INPAINT',
  'TTS',
  'ASR',
  'EMBEDDING',
  'VIDEO',
  'MUSIC',
  'AUGMENT',
  'RPC',
] as const;

/** A YYYY-MM-DD day as the instants the API takes (the whole day, UTC). */
function dayStart(day: string): string | null {
  return day ? `${day}T00:00:00.000Z` : null;
}
function dayEnd(day: string): string | null {
  return day ? `${day}T23:59:59.999Z` : null;
}

export function UsageFilters({ onApply }: { onApply: (filter: UsageFilter) => void }) {
  const [{ data }] = useQuery({ query: USAGE_FILTER_CHOICES });
  const submit = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const text = (name: string) => String(form.get(name) ?? '');
    onApply({
      startDate: dayStart(text('from')),
      endDate: dayEnd(text('to')),
      apiKeyId: text('key') || null,
      modelId: text('model') || null,
      modelType: text('kind') || null,
    });
  };
  return (
    <form class="card filters" onSubmit={submit} aria-label="Filter usage">
      <div class="form-grid">
        <div>
          <label for="usage-from">From</label>
          <input id="usage-from" name="from" type="date" />
        </div>
        <div>
          <label for="usage-to">To</label>
          <input id="usage-to" name="to" type="date" />
        </div>
        <div>
          <label for="usage-key">Key</label>
          <select id="usage-key" name="key">
            <option value="">any key</option>
            {data?.apiKeys.map((key) => (
              <option key={key.id} value={key.id}>
                {key.description || key.id}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="usage-model">Model</label>
          <select id="usage-model" name="model">
            <option value="">any model</option>
            {data?.models.map((model) => (
              <option key={model.id} value={model.id}>
                {model.id}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="usage-kind">Kind</label>
          <select id="usage-kind" name="kind">
            <option value="">All</option>
            {USAGE_KINDS.map((kind) => (
              <option key={kind} value={kind}>
                {kind}
              </option>
            ))}
          </select>
        </div>
      </div>
      <button type="submit">Apply</button>
    </form>
  );
}
