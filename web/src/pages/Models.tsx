import { useQuery } from '@urql/preact';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import { graphql } from '../gql/index.ts';

const MODELS = graphql(`
  query Models {
    models {
      id
      name
      type
    }
  }
`);

export function Models() {
  const [{ data, error }] = useQuery({ query: MODELS });
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Models</h1>
      <ErrorNotice error={error} />
      <ul>
        {data?.models.map((model) => (
          <li key={model.id}>{model.id}</li>
        ))}
      </ul>
    </section>
  );
}
