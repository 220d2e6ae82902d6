import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator } from '../../src/auth/auth-context.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { seedEntries, type SeedEntry } from '../helpers/billing.ts';
import { testDatabaseKind } from '../helpers/db.ts';

interface Connection {
  totalCount: number;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  edges: { node: { id: string; modelType: string | null } }[];
}

const USAGE = `query($first: Int, $after: String, $last: Int, $before: String, $filter: UsageFilter) {
  usage(first: $first, after: $after, last: $last, before: $before, filter: $filter) {
    totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { node { id modelType } }
  }
}`;

const DAYS = ['2025-03-01', '2025-03-02', '2025-03-03', '2025-03-04'];

/** Seven entries a day of two kinds (IMAGE every third, LLM else; pairs share a timestamp), and one TTS entry. */
function seedPlan(): SeedEntry[] {
  const entries: SeedEntry[] = DAYS.flatMap((day) =>
    Array.from({ length: 7 }, (_, i) => ({
      at: `${day}T${String(3 * Math.floor(i / 2)).padStart(2, '0')}:00:00.000Z`,
      currency: 'USD' as const,
      amount: '0.001',
      sku: `sku-${day}-${i}`,
      model: i % 2 === 0 ? 'model-a' : 'model-b',
      modelType: i % 3 === 0 ? 'IMAGE' : 'LLM',
    })),
  );
  entries.push({ at: '2025-03-02T12:00:00.000Z', currency: 'USD', amount: '0.002', sku: 'sku-tts', modelType: 'TTS' });
  return entries;
}

/**
 * The usage connection filtered by model type (UsageFilter.modelType): only that kind, in order, with exact
 * totals whether a window's days are counted from the entries (partial edge days) or from the daily rollups.
 */
describe(`GraphQL usage filtered by model type (${testDatabaseKind})`, () => {
  let t: TestApp;
  let secret: string;
  /** Ground truth straight from the table, newest first by (created_at, id). */
  let truth: { id: string; sku: string; model_type: string; model_id: string; created_at: Date }[];

  beforeAll(async () => {
    t = await createTestApp();
    const { account, adminKey } = await t.app.services.accounts.create(operator(), { name: 'kinds' });
    secret = adminKey.secret;
    await seedEntries(t.app.database.db, account.id, seedPlan());
    const rows = await sql<(typeof truth)[number]>`
      select id, sku, model_type, model_id, created_at from usage_entries where account_id = ${account.id}::uuid
      order by created_at desc, id desc`.execute(t.app.database.db);
    truth = rows.rows;
  });
  afterAll(async () => t.close());

  const usage = async (variables: Record<string, unknown>) => {
    const result = await t.graphql<{ usage: Connection }>(USAGE, variables, secret);
    expect(result.errors).toBeUndefined();
    return result.data!.usage;
  };
  const idsOf = (kind: string, keep: (row: (typeof truth)[number]) => boolean = () => true) =>
    truth.filter((row) => row.model_type === kind && keep(row)).map((row) => row.id);

  it('returns only the kind asked for, paged forwards and backwards, with an exact totalCount', async () => {
    const images = idsOf('IMAGE');
    expect([images.length, idsOf('LLM').length, truth.length]).toEqual([12, 16, 29]);
    const forward: string[] = [];
    let after: string | null = null;
    for (let page = 0; page < 10; page += 1) {
      const connection = await usage({ first: 5, after, filter: { modelType: 'IMAGE' } });
      expect(connection.totalCount).toBe(images.length);
      expect(connection.edges.every((edge) => edge.node.modelType === 'IMAGE')).toBe(true);
      forward.push(...connection.edges.map((edge) => edge.node.id));
      after = connection.pageInfo.endCursor;
      if (!connection.pageInfo.hasNextPage) break;
    }
    expect(forward).toEqual(images);

    const backward: string[] = [];
    let before: string | null = null;
    for (let page = 0; page < 10; page += 1) {
      const connection = await usage({ last: 5, before, filter: { modelType: 'IMAGE' } });
      backward.unshift(...connection.edges.map((edge) => edge.node.id));
      before = connection.pageInfo.startCursor;
      if (!connection.pageInfo.hasPreviousPage) break;
    }
    expect(backward).toEqual(images);

    const ascending = await usage({ first: 500, filter: { modelType: 'LLM', sortOrder: 'ASC' } });
    expect(ascending.edges.map((edge) => edge.node.id)).toEqual(idsOf('LLM').reverse());
    expect(ascending.totalCount).toBe(16);
  });

  it('counts exactly over partial edge days and whole rollup days, with the other filters', async () => {
    const count = async (filter: Record<string, unknown>) => {
      const connection = await usage({ first: 500, filter });
      return { total: connection.totalCount, ids: connection.edges.map((edge) => edge.node.id) };
    };
    // Partial first and last days (counted from the entries) around a whole day (from the rollups).
    const from = new Date('2025-03-01T04:00:00.000Z');
    const to = new Date('2025-03-04T05:00:00.000Z');
    const inWindow = (row: (typeof truth)[number]) => row.created_at >= from && row.created_at <= to;
    const window = { startDate: from.toISOString(), endDate: to.toISOString() };
    for (const kind of ['IMAGE', 'LLM', 'TTS']) {
      const expected = idsOf(kind, inWindow);
      expect(await count({ ...window, modelType: kind }), kind).toEqual({ total: expected.length, ids: expected });
    }
    const withModel = idsOf('IMAGE', (row) => row.model_id === 'model-b');
    expect(withModel.length).toBeGreaterThan(0);
    expect(await count({ modelType: 'IMAGE', modelId: 'model-b' })).toEqual({
      total: withModel.length,
      ids: withModel,
    });
    // Only whole days: every day from the rollups.
    const days = idsOf('TTS', (row) => row.created_at < new Date('2025-03-03T00:00:00.000Z'));
    expect(await count({ modelType: 'TTS', endDate: '2025-03-02T23:59:59.999Z' })).toEqual({ total: 1, ids: days });
    // Kinds match exactly as recorded: an unknown one (or another case) matches nothing.
    expect(await count({ modelType: 'NO-SUCH-KIND' })).toEqual({ total: 0, ids: [] });
    expect(await count({ modelType: 'image' })).toEqual({ total: 0, ids: [] });
  });

  it('takes the same filter in REST, paged by number with exact totals', async () => {
    const page = async (query: string) => {
      const response = await t.call(`/api/v1/billing/usage?${query}`, { key: secret });
      expect(response.status).toBe(200);
      return (await response.json()) as {
        data: { sku: string }[];
        pagination: { total: number; totalPages: number };
      };
    };
    const skus = truth.filter((row) => row.model_type === 'IMAGE').map((row) => row.sku);
    const seen: string[] = [];
    for (let number = 1; number <= 3; number += 1) {
      const body = await page(`modelType=IMAGE&limit=5&page=${number}`);
      expect(body.pagination).toMatchObject({ total: 12, totalPages: 3 });
      seen.push(...body.data.map((entry) => entry.sku));
    }
    expect(seen).toEqual(skus);

    // The OpenAPI document lists the query parameter from the same schema.
    const doc = (await (await t.call('/api/v1/openapi.json', { key: null })).json()) as {
      paths: Record<string, { get?: { parameters?: { name: string; required: boolean }[] } }>;
    };
    expect(doc.paths['/api/v1/billing/usage']?.get?.parameters).toContainEqual(
      expect.objectContaining({ name: 'modelType', required: false }),
    );
  });

  it('refuses a model type with control characters or longer than 64 characters', async () => {
    for (const modelType of ['LL\u0000M', 'x'.repeat(65)]) {
      const result = await t.graphql(USAGE, { first: 1, filter: { modelType } }, secret);
      expect(result.errors?.[0]?.extensions?.code, JSON.stringify(modelType)).toBe('INVALID_REQUEST');
    }
    const rest = await t.call(`/api/v1/billing/usage?modelType=${'x'.repeat(65)}`, { key: secret });
    expect(rest.status).toBe(400);
  });
});
