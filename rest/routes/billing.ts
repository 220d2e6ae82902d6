import { UsageAnalyticsQuery, UsageExportQuery } from '../../src/billing/usage.inputs.ts';
import { json, parseQuery, text } from '../http.ts';
import type { Route } from '../router.ts';
import {
  analyticsWire,
  AnalyticsWire,
  balanceWire,
  BalanceWire,
  csvLines,
  csvStream,
  prefersCsv,
  usageEntryWire,
  UsagePageWire,
} from './billing-wire.ts';

const tags = ['Billing'];
const CSV_HEADERS = {
  'content-type': 'text/csv; charset=utf-8',
  'content-disposition': 'attachment; filename="usage.csv"',
};

export const billingRoutes: Route[] = [
  {
    method: 'GET',
    path: '/billing/usage',
    access: 'admin',
    doc: {
      summary:
        'Export usage entries. Accept: application/json (default) gives one page with totals; Accept: text/csv gives CSV: every matching entry, streamed, unless limit or page is given (then that page only). A CSV carries warningMessage in the x-usage-warning header.',
      tags,
      query: UsageExportQuery,
      response: UsagePageWire,
    },
    async handler(call) {
      const { services, auth, url } = call;
      const query = parseQuery(UsageExportQuery, url);
      if (!prefersCsv(call.header('accept') ?? null)) {
        const page = await services.usage.page(auth, query);
        return json({
          data: page.entries.map(usageEntryWire),
          pagination: { ...page.pagination },
          ...(page.warningMessage && { warningMessage: page.warningMessage }),
        });
      }
      if (query.limit !== undefined || query.page !== undefined) {
        const page = await services.usage.page(auth, query);
        const { limit, page: number, total, totalPages } = page.pagination;
        return text(csvLines(page.entries, true), {
          ...CSV_HEADERS,
          'x-pagination-limit': String(limit),
          'x-pagination-page': String(number),
          'x-pagination-total': String(total),
          'x-pagination-total-pages': String(totalPages),
          ...(page.warningMessage && { 'x-usage-warning': page.warningMessage }),
        });
      }
      const stream = await services.usage.stream(auth, query);
      // The first batch is read before answering, so a failing query is still a proper error response.
      const first = await stream.batches.next();
      const body = csvStream(first.done ? undefined : first.value, stream.batches);
      return {
        status: 200,
        headers: { ...CSV_HEADERS, ...(stream.warningMessage && { 'x-usage-warning': stream.warningMessage }) },
        stream: body,
      };
    },
  },
  {
    method: 'GET',
    path: '/billing/usage-analytics',
    access: 'admin',
    doc: {
      summary:
        'Usage analytics (beta) from the daily rollups: lookback (default 7d, up to 90d) or startDate and endDate; cached 10 minutes',
      tags,
      query: UsageAnalyticsQuery,
      response: AnalyticsWire,
    },
    async handler({ services, auth, url }) {
      return json(analyticsWire(await services.analytics.analytics(auth, parseQuery(UsageAnalyticsQuery, url))));
    },
  },
  {
    method: 'GET',
    path: '/billing/balance',
    access: 'admin',
    doc: {
      summary: 'Balances and which one pays next (DIEM → VCU → BUNDLED_CREDITS → USD)',
      tags,
      response: BalanceWire,
    },
    async handler({ services, auth }) {
      return json(balanceWire(await services.balance.summary(auth)));
    },
  },
];
