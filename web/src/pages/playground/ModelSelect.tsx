import { useQuery } from '@urql/preact';
import type { ModelType } from '../../gql/graphql.ts';
import { PLAYGROUND_MODELS } from './operations.ts';

/** A model of one type (online ones only), named `model` in its form; empty while the catalog loads. */
export function ModelSelect({ id, type }: { id: string; type: ModelType }) {
  const [{ data }] = useQuery({ query: PLAYGROUND_MODELS });
  const models = data?.models.filter((model) => model.type === type && !model.offline) ?? [];
  return (
    <div>
      <label for={id}>Model</label>
      <select id={id} name="model" required>
        {models.map((model) => (
          <option key={model.id} value={model.id}>
            {model.id}
          </option>
        ))}
      </select>
    </div>
  );
}
