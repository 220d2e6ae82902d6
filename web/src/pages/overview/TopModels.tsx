import { formatAmount } from '../../lib/format.ts';

interface TopModelsProps {
  readonly models: readonly {
    readonly modelName: string;
    readonly modelType: string;
    readonly totalUsd: string;
    readonly totalDiem: string;
    readonly totalUnits: number;
    readonly unitType: string;
  }[];
}

/** The models with the highest spend over the period (the API sorts them). */
export function TopModels({ models }: TopModelsProps) {
  if (models.length === 0) return <p class="muted">No usage in the last 30 days.</p>;
  return (
    <div class="table-wrap">
      <table data-testid="top-models">
        <caption class="sr-only">Top models by spend, last 30 days</caption>
        <thead>
          <tr>
            <th scope="col">Model</th>
            <th scope="col">Type</th>
            <th scope="col">USD</th>
            <th scope="col">DIEM</th>
            <th scope="col">Units</th>
          </tr>
        </thead>
        <tbody>
          {models.slice(0, 10).map((model) => (
            <tr key={model.modelName}>
              <td>{model.modelName}</td>
              <td>{model.modelType}</td>
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
  );
}
