import { useQuery } from '@urql/preact';
import { useState } from 'preact/hooks';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import { graphql } from '../gql/index.ts';
import type { ModelType } from '../gql/graphql.ts';

const MODELS = graphql(`
  query Models($type: ModelType) {
    models(type: $type) {
      id
      name
      type
      description
      traits
      capabilities
      pricing
      contextLength
      offline
      privacy
    }
  }
`);

/** The ModelType enum of schema/schema.graphql, in the order the filter offers them. */
const TYPES: readonly ModelType[] = [
  'TEXT',
  'IMAGE',
  'INPAINT',
  'UPSCALE',
  'TTS',
  'ASR',
  'EMBEDDING',
  'MUSIC',
  'VIDEO',
];

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Prices as lines: `{ input: { usd: 0.5, diem: 0.5 } }` → "input: $0.5 · 0.5 DIEM"; nested objects get a path. */
export function priceLines(pricing: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(pricing).flatMap(([key, value]) => {
    const name = prefix ? `${prefix} ${key}` : key;
    if (isRecord(value) && ('usd' in value || 'diem' in value)) {
      const parts = [
        value.usd !== undefined && `$${String(value.usd)}`,
        value.diem !== undefined && `${String(value.diem)} DIEM`,
      ];
      return [`${name}: ${parts.filter(Boolean).join(' · ')}`];
    }
    if (isRecord(value)) return priceLines(value, name);
    return [`${name}: ${Array.isArray(value) ? value.join(', ') : String(value)}`];
  });
}

/** Capabilities the model has (`{ supportsVision: true, … }` → "supportsVision"), and valued ones as "name: value". */
function capabilityTags(capabilities: Record<string, unknown> | null | undefined): string[] {
  if (!capabilities) return [];
  return Object.entries(capabilities).flatMap(([name, value]) =>
    value === true ? [name] : value === false || value === null || isRecord(value) ? [] : [`${name}: ${String(value)}`],
  );
}

function Tags({ items, label }: { items: readonly string[]; label: string }) {
  if (items.length === 0) return <span class="muted">—</span>;
  return (
    <ul class="tags" aria-label={label}>
      {items.map((item) => (
        <li key={item}>{item}</li>
      ))}
    </ul>
  );
}

export function Models() {
  const [type, setType] = useState<ModelType | ''>('');
  const [{ data, error, fetching }] = useQuery({ query: MODELS, variables: { type: type || null } });
  return (
    <section aria-labelledby="page-title" aria-busy={fetching}>
      <h1 id="page-title">Models</h1>
      <div class="toolbar">
        <div>
          <label for="model-type">Type</label>
          <select
            id="model-type"
            value={type}
            onChange={(event) => setType(event.currentTarget.value as ModelType | '')}
          >
            <option value="">All types</option>
            {TYPES.map((one) => (
              <option key={one} value={one}>
                {one}
              </option>
            ))}
          </select>
        </div>
        {data && <p class="muted" data-testid="model-count">{`${data.models.length} models`}</p>}
      </div>
      <ErrorNotice error={error} />
      {data && (
        <div class="table-wrap">
          <table data-testid="models">
            <caption class="sr-only">The model catalog</caption>
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col">Type</th>
                <th scope="col">Prices</th>
                <th scope="col">Traits</th>
                <th scope="col">Capabilities</th>
              </tr>
            </thead>
            <tbody>
              {data.models.map((model) => (
                <tr key={model.id} data-model={model.id}>
                  <td>
                    <strong>{model.id}</strong>
                    {model.offline && <span class="error"> (offline)</span>}
                    <br />
                    <span class="muted">{model.name}</span>
                    {model.contextLength ? (
                      <span class="muted">{` · ${model.contextLength.toLocaleString('en-US')} tokens`}</span>
                    ) : null}
                  </td>
                  <td>{model.type}</td>
                  <td>
                    <Tags items={priceLines(model.pricing)} label="Prices" />
                  </td>
                  <td>
                    <Tags items={model.traits} label="Traits" />
                  </td>
                  <td>
                    <Tags items={capabilityTags(model.capabilities)} label="Capabilities" />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
