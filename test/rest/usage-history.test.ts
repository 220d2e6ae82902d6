import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator } from '../../src/auth/auth-context.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { parseCsv, seedEntries, type SeedEntry } from '../helpers/billing.ts';
import { testDatabaseKind } from '../helpers/db.ts';

interface HistoryBody {
  data: {
    sku: string;
    timestamp: string;
    currency: string;
    amount: number;
    inferenceDetails: Record<string, unknown> | null;
  }[];
  nextCursor: string | null;
}

/** 45 entries over three days, USD and DIEM, some sharing a timestamp (ties are walked by id). */
function plan(): SeedEntry[] {
  const entries: SeedEntry[] = [];
  for (let i = 0; i < 45; i += 1) {
    const day = `2026-03-0${1 + (i % 3)}`;
    const hour = String(Math.floor(i / 3) % 24).padStart(2, '0');
    entries.push({
      at: `${day}T${hour}:00:00.000Z`,
      currency: i % 4 === 0 ? 'DIEM' : 'USD',
      amount: `0.0${(i % 9) + 1}`,
      sku: `sku-${String(i).padStart(2, '0')}`,
    });
  }
  return entries;
}

describe(`GET /billing/usage-history (${testDatabaseKind})`, () => {
  let t: TestApp;
  let secret: string;
  let otherSecret: string;
  let inferenceSecret: string;
  let accountId: string;
  let ordered: { sku: string; at: string; currency: string }[];

  beforeAll(async () => {
    t = await createTestApp();
    const services = t.app.services;
    const { account, adminKey } = await services.accounts.create(operator(), { name: 'history' });
    secret = adminKey.secret;
    accountId = account.id;
    const seeded = plan();
    await seedEntries(t.app.database.db, account.id, seeded);
    ordered = seeded
      .map((e) => ({ sku: e.sku ?? '', at: e.at, currency: e.currency }))
      .sort((a, b) => a.at.localeCompare(b.at));
    const other = await services.accounts.create(operator(), { name: 'history-other' });
    otherSecret = other.adminKey.secret;
    const inference = await services.apiKeys.createAsOperator(operator(), account.id, {
      apiKeyType: 'INFERENCE',
      description: 'inference',
    });
    inferenceSecret = inference.secret;
  });
  afterAll(async () => t.close());

  const get = (query: string, key = secret, headers: Record<string, string> = {}) =>
    t.call(`/api/v1/billing/usage-history${query}`, { key, headers });
  const page = async (query: string, key = secret) => {
    const response = await get(query, key);
    expect(response.status).toBe(200);
    return (await response.json()) as HistoryBody;
  };

  async function walk(first: string): Promise<HistoryBody['data']> {
    let body = await page(first);
    const all = [...body.data];
    while (body.nextCursor) {
      expect(body.nextCursor).toMatch(/^[A-Za-z0-9_-]{1,512}$/);
      body = await page(`?cursor=${body.nextCursor}`);
      all.push(...body.data);
    }
    return all;
  }

  it('walks every entry once, oldest first, in pages of pageSize, with closed entries', async () => {
    const first = await page('?pageSize=10');
    expect(first.data).toHaveLength(10);
    expect(Object.keys(first.data[0] ?? {}).sort()).toEqual(
      ['amount', 'currency', 'inferenceDetails', 'notes', 'pricePerUnitUsd', 'sku', 'timestamp', 'units'].sort(),
    );
    expect(first.data[0]?.amount).toBeLessThan(0);
    const all = await walk('?pageSize=10');
    expect(all).toHaveLength(45);
    expect(new Set(all.map((e) => e.sku)).size).toBe(45);
    const times = all.map((e) => e.timestamp);
    expect([...times].sort()).toEqual(times);
  });

  it('carries the filters in the cursor: currency, start (inclusive) and end (exclusive)', async () => {
    const all = await walk(
      '?pageSize=10&currency=USD&startTimestamp=2026-03-02T00:00:00Z&endTimestamp=2026-03-03T05:00:00Z',
    );
    const expected = ordered.filter(
      (e) => e.currency === 'USD' && e.at >= '2026-03-02T00:00:00.000Z' && e.at < '2026-03-03T05:00:00.000Z',
    );
    expect(all.map((e) => e.sku).sort()).toEqual(expected.map((e) => e.sku).sort());
    expect(all.every((e) => e.currency === 'USD')).toBe(true);
  });

  it('keeps its pages stable while new usage arrives', async () => {
    const first = await page('?pageSize=40');
    await seedEntries(t.app.database.db, accountId, [
      { at: new Date().toISOString(), currency: 'USD', amount: '0.01', sku: 'sku-late' },
    ]);
    const rest = await page(`?cursor=${first.nextCursor ?? ''}`);
    expect(rest.data.map((e) => e.sku)).not.toContain('sku-late');
    expect(first.data.length + rest.data.length).toBe(45);
    expect(rest.nextCursor).toBeNull();
  });

  it('answers a CSV page with the export file name and x-next-cursor', async () => {
    const response = await get('?pageSize=10', secret, { accept: 'text/csv' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(response.headers.get('content-disposition')).toMatch(
      /^attachment; filename=billing-usage-history-\d{8}T\d{9}Z\.csv$/,
    );
    const cursor = response.headers.get('x-next-cursor');
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    const rows = parseCsv(await response.text());
    expect(rows).toHaveLength(11);
  });

  it('refuses a filter beside a cursor, and tampered or foreign cursors, with 400', async () => {
    const first = await page('?pageSize=10');
    const cursor = first.nextCursor ?? '';
    const mixed = await get(`?cursor=${cursor}&currency=USD`);
    expect(mixed.status).toBe(400);
    expect(await mixed.json()).toMatchObject({ error: expect.stringContaining('currency') });
    const flipped = cursor.slice(0, 5) + (cursor[5] === 'A' ? 'B' : 'A') + cursor.slice(6);
    expect((await get(`?cursor=${flipped}`)).status).toBe(400);
    expect((await get(`?cursor=${cursor}`, otherSecret)).status).toBe(400);
    expect((await get('?cursor=not.valid')).status).toBe(400);
  });

  it('validates the first page and needs an ADMIN key', async () => {
    for (const query of [
      '?pageSize=9',
      '?pageSize=1001',
      '?currency=VCU',
      '?startTimestamp=yesterday',
      '?startTimestamp=2026-03-02T00:00:00Z&endTimestamp=2026-03-01T00:00:00Z',
    ]) {
      const response = await get(query);
      expect(response.status, query).toBe(400);
    }
    expect((await get('')).status).toBe(200);
    expect((await t.call('/api/v1/billing/usage-history', { key: null })).status).toBe(401);
    expect((await get('', inferenceSecret)).status).toBe(401);
  });

  it('serves the same walk over GraphQL', async () => {
    const query = `query ($cursor: String, $pageSize: Int) {
      usageHistory(cursor: $cursor, pageSize: $pageSize) { entries { sku } nextCursor }
    }`;
    type Page = { usageHistory: { entries: { sku: string }[]; nextCursor: string | null } };
    let result = await t.graphql<Page>(query, { pageSize: 20 }, secret);
    const skus = result.data?.usageHistory.entries.map((e) => e.sku) ?? [];
    while (result.data?.usageHistory.nextCursor) {
      result = await t.graphql<Page>(query, { cursor: result.data.usageHistory.nextCursor }, secret);
      skus.push(...(result.data?.usageHistory.entries.map((e) => e.sku) ?? []));
    }
    expect(skus.length).toBeGreaterThanOrEqual(45);
    expect(new Set(skus).size).toBe(skus.length);
    const bad = await t.graphql(query, { pageSize: 5 }, secret);
    expect(bad.errors?.[0]?.message).toMatch(/pageSize/);
  });
});
