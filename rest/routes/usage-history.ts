import { z } from 'zod';
import { nanoToNumber } from '../../src/billing/money.ts';
import { HISTORY_CURRENCIES, UsageHistoryQuery } from '../../src/billing/usage-history.inputs.ts';
import type { UsageEntry } from '../../src/billing/usage.types.ts';
import { json, parseQuery, text, type JsonValue } from '../http.ts';
import type { Route } from '../router.ts';
import { csvLines, prefersCsv } from './billing-wire.ts';

/** The usage-history entry: a closed object in which every detail is present, null where unknown. */
const HistoryEntryWire = z.object({
  amount: z.number().describe('Negative for charges'),
  currency: z.enum(HISTORY_CURRENCIES),
  inferenceDetails: z
    .object({
      requestId: z.string(),
      promptTokens: z.number().int().nullable(),
      completionTokens: z.number().int().nullable(),
      inferenceExecutionTime: z.number().int().nullable(),
    })
    .nullable(),
  notes: z.string(),
  pricePerUnitUsd: z.number(),
  sku: z.string(),
  timestamp: z.iso.datetime(),
  units: z.number(),
});

const HistoryPageWire = z.object({ data: z.array(HistoryEntryWire), nextCursor: z.string().nullable() });

function historyEntryWire(entry: UsageEntry): { [field: string]: JsonValue } {
  const details = entry.inferenceDetails;
  return {
    amount: nanoToNumber(entry.amount),
    currency: entry.currency,
    inferenceDetails: details
      ? {
          requestId: details.requestId,
          promptTokens: details.promptTokens ?? null,
          completionTokens: details.completionTokens ?? null,
          inferenceExecutionTime: details.inferenceExecutionTime,
        }
      : null,
    notes: entry.notes,
    pricePerUnitUsd: Number(entry.pricePerUnitUsd),
    sku: entry.sku,
    timestamp: entry.createdAt.toISOString(),
    units: Number(entry.units),
  };
}

/** `billing-usage-history-20261125T101500123Z.csv`: the export time in UTC. */
const csvFileName = (now: Date) =>
  `billing-usage-history-${now.toISOString().replace(/[-:]/g, '').replace('.', '')}.csv`;

export const usageHistoryRoutes: Route[] = [
  {
    method: 'GET',
    path: '/billing/usage-history',
    access: 'admin',
    doc: {
      summary:
        'The usage ledger in ascending time order, by cursor: the first page takes the filters, later pages only cursor (nextCursor is null on the last page). Accept: text/csv gives the page as CSV with x-next-cursor.',
      tags: ['Billing'],
      query: UsageHistoryQuery,
      response: HistoryPageWire,
    },
    async handler(call) {
      const page = await call.services.usageHistory.page(call.auth, parseQuery(UsageHistoryQuery, call.url));
      if (!prefersCsv(call.header('accept') ?? null))
        return json({ data: page.entries.map(historyEntryWire), nextCursor: page.nextCursor });
      return text(csvLines(page.entries, true), {
        'content-type': 'text/csv; charset=utf-8',
        'content-disposition': `attachment; filename=${csvFileName(new Date())}`,
        ...(page.nextCursor !== null && { 'x-next-cursor': page.nextCursor }),
      });
    },
  },
];
