/* The Usage page's CSV export: every entry of the filtered range, read page by page over the connection. */
import type { Client } from '@urql/core';
import type { UsageFilter, UsagePageQuery } from '../../gql/graphql.ts';
import { toCsv } from '../../lib/csv.ts';
import { USAGE_PAGE } from './operations.ts';

export type UsageRow = UsagePageQuery['usage']['edges'][number]['node'];

export const CSV_HEADER = ['timestamp', 'model', 'kind', 'sku', 'line', 'units', 'amount', 'currency', 'key'];

export function csvFields(row: UsageRow): (string | number | null | undefined)[] {
  return [
    row.timestamp,
    row.modelId,
    row.modelType,
    row.sku,
    row.lineType,
    row.units,
    row.amount,
    row.currency,
    row.apiKey?.description ?? row.apiKeyId,
  ];
}

/** Reads the whole filtered range (500 per request, the connection's largest page) into one CSV text. */
export async function exportUsageCsv(client: Client, filter: UsageFilter): Promise<{ csv: string; rows: number }> {
  const rows: UsageRow[] = [];
  let after: string | null | undefined;
  for (;;) {
    const result = await client
      .query(USAGE_PAGE, { filter, first: 500, after }, { requestPolicy: 'network-only' })
      .toPromise();
    if (result.error) throw result.error;
    const usage = result.data?.usage;
    if (!usage) break;
    rows.push(...usage.edges.map((edge) => edge.node));
    if (!usage.pageInfo.hasNextPage || !usage.pageInfo.endCursor) break;
    after = usage.pageInfo.endCursor;
  }
  return { csv: toCsv([CSV_HEADER, ...rows.map(csvFields)]), rows: rows.length };
}
