import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator } from '../../src/auth/auth-context.ts';
import { UsageService } from '../../src/billing/usage.service.ts';
import { createLogger } from '../../src/logger.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { seedEntries, type SeedEntry } from '../helpers/billing.ts';
import { testDatabaseKind } from '../helpers/db.ts';

interface PageBody {
  data: { sku: string; timestamp: string; currency: string }[];
  pagination: { limit: number; page: number; total: number; totalPages: number };
  warningMessage?: string;
}

/** Entries over five days around the default DIEM cut-over (2025-01-01), with ties and sub-millisecond times. */
function seedPlan(webAppKey: string): SeedEntry[] {
  const entries: SeedEntry[] = [];
  const days = ['2024-12-30', '2024-12-31', '2025-01-01', '2025-01-02', '2025-01-03'];
  days.forEach((day, d) => {
    for (let i = 0; i < 7; i += 1) {
      // Every third pair shares a timestamp: ties are broken by id.
      const second = String(Math.floor(i / 2) * 3).padStart(2, '0');
      entries.push({
        at: `${day}T${String(3 * i).padStart(2, '0')}:00:${second}.000Z`,
        currency: (d + i) % 3 === 0 ? 'DIEM' : 'USD',
        amount: `0.00${d + 1}${i}`,
        sku: `sku-${day}-${i}`,
        apiKeyId: i % 4 === 0 ? null : webAppKey,
      });
    }
  });
  entries.push({ at: '2025-01-02T06:00:00.000Z', currency: 'USD', amount: '0.5', sku: 'sku-at-end-bound' });
  entries.push({ at: '2024-12-31T12:00:00.000Z', currency: 'DIEM', amount: '0.25', sku: 'sku-at-start-bound' });
  return entries;
}

describe(`Usage export paging and filters (${testDatabaseKind})`, () => {
  let t: TestApp;
  let secret: string;
  let accountId: string;
  /** Ground truth: the account's entries straight from the table, oldest first by (created_at, id). */
  let truth: { sku: string; created_at_us: bigint; currency: string }[];

  beforeAll(async () => {
    t = await createTestApp();
    const { account, adminKey } = await t.app.services.accounts.create(operator(), { name: 'paging' });
    accountId = account.id;
    secret = adminKey.secret;
    await seedEntries(t.app.database.db, accountId, seedPlan(adminKey.key.id));
    // Sub-millisecond parts (PostgreSQL keeps microseconds; a JavaScript Date does not), same day.
    await sql`update usage_entries set created_at = created_at + interval '250 microseconds' where account_id = ${accountId}::uuid and sku like '%-3'`.execute(
      t.app.database.db,
    );
    const rows = await sql<{ sku: string; created_at_us: bigint; currency: string }>`
      select sku, currency, (extract(epoch from created_at) * 1000000)::int8 as created_at_us from usage_entries
      where account_id = ${accountId}::uuid order by created_at, id`.execute(t.app.database.db);
    truth = rows.rows;
  });
  afterAll(async () => t.close());

  const fetchPage = async (query: string) =>
    (await (await t.call(`/api/v1/billing/usage?${query}`, { key: secret })).json()) as PageBody;
  const micros = (iso: string) => BigInt(Date.parse(iso)) * 1000n;
  const expectedSkus = (filter: { currency?: string; from?: bigint; until?: bigint }) =>
    truth
      .filter(
        (e) =>
          (!filter.currency || e.currency === filter.currency) &&
          (filter.from === undefined || e.created_at_us >= filter.from) &&
          (filter.until === undefined || e.created_at_us < filter.until),
      )
      .map((e) => e.sku);

  async function allPages(query: string, limit: number) {
    const first = await fetchPage(`${query}&limit=${limit}&page=1`);
    const skus = first.data.map((e) => e.sku);
    for (let page = 2; page <= first.pagination.totalPages; page += 1) {
      const next = await fetchPage(`${query}&limit=${limit}&page=${page}`);
      expect(next.pagination).toEqual({ ...first.pagination, page });
      skus.push(...next.data.map((e) => e.sku));
    }
    return { skus, pagination: first.pagination, warningMessage: first.warningMessage };
  }

  it.each([
    ['no filter', '', {}],
    ['currency', 'currency=DIEM', { currency: 'DIEM' }],
    [
      'a date-time window with inclusive bounds',
      'startDate=2024-12-31T12:00:00Z&endDate=2025-01-02T06:00:00.000Z',
      { from: micros('2024-12-31T12:00:00Z'), until: micros('2025-01-02T06:00:00Z') + 1n },
    ],
    [
      'whole days',
      'startDate=2024-12-31&endDate=2025-01-01',
      { from: micros('2024-12-31T00:00:00Z'), until: micros('2025-01-02T00:00:00Z') },
    ],
    [
      'an offset and a currency',
      'startDate=2025-01-01T05:30:00%2B02:00&currency=USD',
      { from: micros('2025-01-01T03:30:00Z'), currency: 'USD' },
    ],
    ['only an end', 'endDate=2025-01-01T09:00:00.250Z', { until: micros('2025-01-01T09:00:00.250Z') + 1n }],
  ])('should page exactly in both orders with %s', async (_name, query, filter) => {
    const expected = expectedSkus(filter);
    expect(expected.length).toBeGreaterThan(0);
    for (const limit of [1, 4, 500]) {
      const desc = await allPages(`${query}&sortOrder=desc`, limit);
      expect(desc.pagination).toEqual({
        limit,
        page: 1,
        total: expected.length,
        totalPages: Math.ceil(expected.length / limit),
      });
      expect(desc.skus).toEqual([...expected].reverse());
      const asc = await allPages(`${query}&sortOrder=asc`, limit);
      expect(asc.skus).toEqual(expected);
    }
    const beyond = await fetchPage(`${query}&limit=4&page=99`);
    expect(beyond.data).toEqual([]);
    expect(beyond.pagination.total).toBe(expected.length);
  });

  it('should sort by creation time newest first by default, ties by id', async () => {
    const page = await fetchPage('limit=500');
    expect(page.data.map((e) => e.sku)).toEqual(expectedSkus({}).reverse());
  });

  it('should warn about legacy VCU only for DIEM entries in a range that starts before the cut-over', async () => {
    expect((await fetchPage('limit=1')).warningMessage).toMatch(/before 2025-01-01.*legacy VCU/);
    expect((await fetchPage('startDate=2024-12-30T00:00:00Z&limit=1')).warningMessage).toBeDefined();
    expect((await fetchPage('startDate=2025-01-01&limit=1')).warningMessage).toBeUndefined();
    expect((await fetchPage('currency=USD&limit=1')).warningMessage).toBeUndefined();
    // 2024-12-30 has DIEM entries at 00:00 and 09:00 (and USD between): a range between them has none.
    const between = await fetchPage('startDate=2024-12-30T00:00:01Z&endDate=2024-12-30T08:59:59Z&limit=1');
    expect(between.pagination.total).toBe(2);
    expect(between.warningMessage).toBeUndefined();
  });

  it('should stream every entry in keyset batches, in both orders and with filters', async () => {
    const services = t.app.services;
    const usage = new UsageService({
      db: t.app.database.db,
      events: services.events,
      logger: createLogger('silent'),
      diemCutoverDate: new Date('2025-01-01T00:00:00Z'),
      streamBatchSize: 3,
      settled: services.billing,
    });
    const auth = await services.auth.authenticate({ authorization: `Bearer ${secret}` }, 'x');
    const collect = async (input: Record<string, string>) => {
      const stream = await usage.stream(auth, input);
      const skus: string[] = [];
      for await (const batch of stream.batches) {
        expect(batch.length).toBeLessThanOrEqual(3);
        skus.push(...batch.map((e) => e.sku));
      }
      return { skus, warningMessage: stream.warningMessage };
    };
    expect((await collect({ sortOrder: 'asc' })).skus).toEqual(expectedSkus({}));
    const desc = await collect({});
    expect(desc.skus).toEqual(expectedSkus({}).reverse());
    expect(desc.warningMessage).toMatch(/legacy VCU/);
    const window = { startDate: '2024-12-31T12:00:00Z', endDate: '2025-01-02T06:00:00Z', currency: 'USD' };
    expect((await collect({ ...window, sortOrder: 'asc' })).skus).toEqual(
      expectedSkus({ currency: 'USD', from: micros(window.startDate), until: micros(window.endDate) + 1n }),
    );
  });

  it('should report the web app (no key) in analytics', async () => {
    const analytics = (await (
      await t.call('/api/v1/billing/usage-analytics?startDate=2024-12-30&endDate=2025-01-03', { key: secret })
    ).json()) as {
      lookback: string;
      byKey: { apiKeyId: string | null; description: string }[];
      byDate: { date: string }[];
    };
    expect(analytics.lookback).toBe('2024-12-30:2025-01-03');
    expect(analytics.byDate.map((d) => d.date.slice(0, 10))).toEqual([
      '2024-12-30',
      '2024-12-31',
      '2025-01-01',
      '2025-01-02',
      '2025-01-03',
    ]);
    expect(analytics.byKey.map((k) => k.description).sort()).toEqual(['Web App', 'paging admin']);
    expect(analytics.byKey.find((k) => k.description === 'Web App')?.apiKeyId).toBeNull();
  });
});
