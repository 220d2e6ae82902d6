import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatNano, parseNano } from '../../src/billing/money.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import {
  chargeMixedUnits,
  chargeScenario,
  scenarioAccount,
  seedEntries,
  sumBy,
  type ExpectedLine,
} from '../helpers/billing.ts';
import { testDatabaseKind } from '../helpers/db.ts';

type Scenario = Awaited<ReturnType<typeof scenarioAccount>>;
interface Edge {
  cursor: string;
  node: { id: string; sku: string; amount: string; currency: string; timestamp: string; apiKeyId: string | null };
}
interface Connection {
  totalCount: number;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  edges: Edge[];
}

const USAGE = `query($first: Int, $after: String, $last: Int, $before: String, $filter: UsageFilter) {
  usage(first: $first, after: $after, last: $last, before: $before, filter: $filter) {
    totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { cursor node { id sku amount currency timestamp apiKeyId } }
  }
}`;

describe(`GraphQL billing read side (${testDatabaseKind})`, () => {
  let t: TestApp;
  let a: Scenario;
  let other: Scenario;
  let expected: ExpectedLine[];

  beforeAll(async () => {
    t = await createTestApp();
    a = await scenarioAccount(t.app.services, 'delta');
    expected = await chargeScenario(t.app.services, a);
    other = await scenarioAccount(t.app.services, 'epsilon');
    await chargeScenario(t.app.services, other);
  });
  afterAll(async () => t.close());

  const usage = async (variables: Record<string, unknown>, key = a.adminSecret) =>
    t.graphql<{ usage: Connection }>(USAGE, variables, key);

  it('should page through usage entries with cursors, forwards and backwards, matching the REST export', async () => {
    const rest = (await (await t.call('/api/v1/billing/usage?limit=500', { key: a.adminSecret })).json()) as {
      data: { sku: string; amount: number }[];
    };
    const forward: Edge[] = [];
    let after: string | null = null;
    for (let page = 0; page < 10; page += 1) {
      const result = await usage({ first: 3, after });
      expect(result.errors).toBeUndefined();
      const connection = result.data!.usage;
      expect(connection.totalCount).toBe(expected.length);
      expect(connection.pageInfo.hasPreviousPage).toBe(after !== null);
      forward.push(...connection.edges);
      after = connection.pageInfo.endCursor;
      if (!connection.pageInfo.hasNextPage) break;
    }
    expect(forward.map((e) => e.node.sku)).toEqual(rest.data.map((e) => e.sku));
    expect(forward.map((e) => parseNano(e.node.amount))).toEqual(rest.data.map((e) => parseNano(String(e.amount))));
    expect(new Set(forward.map((e) => e.node.id))).toEqual(new Set(expected.map((e) => e.entryId)));
    expect(
      sumBy(
        forward,
        (e) => e.node.currency,
        (e) => parseNano(e.node.amount),
      ),
    ).toEqual(
      sumBy(
        expected,
        (e) => e.currency,
        (e) => e.amount,
      ),
    );

    const backward: Edge[] = [];
    let before: string | null = null;
    for (let page = 0; page < 10; page += 1) {
      const connection: Connection = (await usage({ last: 4, before })).data!.usage;
      backward.unshift(...connection.edges);
      before = connection.pageInfo.startCursor;
      if (!connection.pageInfo.hasPreviousPage) break;
    }
    expect(backward.map((e) => e.node.id)).toEqual(forward.map((e) => e.node.id));

    const oldestFirst = (await usage({ first: 500, filter: { sortOrder: 'ASC', currency: 'USD' } })).data!.usage;
    expect(oldestFirst.edges.map((e) => e.node.id)).toEqual(
      forward
        .filter((e) => e.node.currency === 'USD')
        .map((e) => e.node.id)
        .reverse(),
    );
    expect(oldestFirst.totalCount).toBe(expected.filter((e) => e.currency === 'USD').length);
    const none = (await usage({ first: 5, filter: { startDate: new Date(Date.now() + 3_600_000).toISOString() } }))
      .data!.usage;
    expect(none).toEqual({
      totalCount: 0,
      pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null },
      edges: [],
    });
  });

  it('should refuse bad arguments and non-ADMIN keys with coded errors', async () => {
    const codeOf = (result: { errors?: { extensions?: Record<string, unknown> }[] }) =>
      result.errors?.[0]?.extensions?.code;
    expect(codeOf(await usage({ first: 501 }))).toBe('INVALID_REQUEST');
    expect(codeOf(await usage({ first: 2, after: 'not-a-cursor' }))).toBe('INVALID_REQUEST');
    expect(codeOf(await usage({ first: 2, last: 2 }))).toBe('INVALID_REQUEST');
    expect(codeOf(await usage({ first: 2 }, a.inferenceSecret))).toBe('ADMIN_KEY_REQUIRED');
    expect(codeOf(await t.graphql('{ usageAnalytics(lookback: "91d") { lookback } }', {}, a.adminSecret))).toBe(
      'INVALID_REQUEST',
    );
    expect(codeOf(await t.graphql('{ usageAnalytics(startDate: "2026-01-01") { lookback } }', {}, a.adminSecret))).toBe(
      'INVALID_REQUEST',
    );
    expect(codeOf(await t.graphql('{ balance { canConsume } }', {}, a.inferenceSecret))).toBe('ADMIN_KEY_REQUIRED');
  });

  it('should return typed analytics whose decimals agree exactly with the charges', async () => {
    const result = await t.graphql<{
      usageAnalytics: {
        lookback: string;
        startDate: string;
        endDate: string;
        byDate: { date: string; usd: string; diem: string }[];
        byModel: {
          modelName: string;
          modelType: string | null;
          totalUsd: string;
          totalDiem: string;
          totalUnits: number;
          breakdown: { type: string; usd: string; diem: string }[] | null;
        }[];
        byKey: { apiKeyId: string | null; description: string; totalUsd: string; totalDiem: string }[];
        byModelDaily: { date: string; values: { name: string; diem: string }[] }[];
        byKeyDaily: { date: string; values: { name: string; diem: string }[] }[];
        topModels: string[];
        topKeyNames: string[];
      };
    }>(
      `{ usageAnalytics(lookback: "3d") { lookback startDate endDate byDate { date usd diem }
         byModel { modelName modelType totalUsd totalDiem totalUnits breakdown { type usd diem } }
         byKey { apiKeyId description totalUsd totalDiem }
         byModelDaily { date values { name diem } } byKeyDaily { date values { name diem } } topModels topKeyNames } }`,
      {},
      a.adminSecret,
    );
    expect(result.errors).toBeUndefined();
    const analytics = result.data!.usageAnalytics;
    const spent = (lines: ExpectedLine[], diem: boolean) =>
      formatNano(-lines.filter((e) => (e.currency === 'DIEM') === diem).reduce((s, e) => s + e.amount, 0n));
    expect(analytics.lookback).toBe('3d');
    expect(analytics.byDate).toHaveLength(3);
    expect(analytics.byDate.at(-1)).toMatchObject({ usd: spent(expected, false), diem: spent(expected, true) });
    for (const model of analytics.byModel) {
      const lines = expected.filter((e) => e.model === model.modelName);
      expect([model.totalUsd, model.totalDiem]).toEqual([spent(lines, false), spent(lines, true)]);
      if (model.breakdown)
        for (const line of model.breakdown)
          expect([line.usd, line.diem]).toEqual([
            spent(
              lines.filter((e) => e.lineType === line.type),
              false,
            ),
            spent(
              lines.filter((e) => e.lineType === line.type),
              true,
            ),
          ]);
    }
    expect(analytics.byModel.find((m) => m.modelName === 'lagoon-llm')?.breakdown?.map((l) => l.type)).toEqual([
      'Input',
      'Output',
    ]);
    for (const key of analytics.byKey) {
      const lines = expected.filter((e) => e.keyId === key.apiKeyId);
      expect([key.totalUsd, key.totalDiem]).toEqual([spent(lines, false), spent(lines, true)]);
    }
    const today = analytics.byModelDaily.at(-1)!;
    expect(today.date).toBe(`${analytics.endDate}T00:00:00.000Z`);
    expect(today.values.map((v) => v.name)).toEqual(analytics.topModels);
    expect(today.values.map((v) => v.diem)).toEqual(
      analytics.topModels.map((name) =>
        spent(
          expected.filter((e) => e.model === name),
          true,
        ),
      ),
    );
    expect(analytics.byKeyDaily.at(-1)!.values.map((v) => v.name)).toEqual(analytics.topKeyNames);
  });

  it('should filter usage by API key and by model in the database, in GraphQL and REST alike', async () => {
    const ids = async (filter: Record<string, unknown>) => {
      const result = await usage({ first: 500, filter });
      expect(result.errors).toBeUndefined();
      return { count: result.data!.usage.totalCount, ids: result.data!.usage.edges.map((e) => e.node.id).sort() };
    };
    const of = (lines: ExpectedLine[]) => ({ count: lines.length, ids: lines.map((e) => e.entryId).sort() });
    const byKey = expected.filter((e) => e.keyId === a.inferenceKeyId);
    const byModel = expected.filter((e) => e.model === 'lagoon-llm');
    expect(byKey.length).toBeGreaterThan(0);
    expect(byKey.length).toBeLessThan(expected.length);
    expect(byModel.length).toBeGreaterThan(0);
    expect(await ids({ apiKeyId: a.inferenceKeyId })).toEqual(of(byKey));
    expect(await ids({ modelId: 'lagoon-llm' })).toEqual(of(byModel));
    expect(await ids({ apiKeyId: a.adminKeyId, modelId: 'lagoon-llm', currency: 'USD' })).toEqual(
      of(expected.filter((e) => e.keyId === a.adminKeyId && e.model === 'lagoon-llm' && e.currency === 'USD')),
    );
    // The count of a window that starts today is exact from the entries; one without a start is from the rollups.
    expect(await ids({ apiKeyId: a.inferenceKeyId, startDate: new Date(Date.now() - 60_000).toISOString() })).toEqual(
      of(byKey),
    );
    // Another account's key or an unknown model matches nothing of this account.
    expect(await ids({ apiKeyId: other.inferenceKeyId })).toEqual({ count: 0, ids: [] });
    expect(await ids({ modelId: 'no-such-model' })).toEqual({ count: 0, ids: [] });

    const rest = await t.call(`/api/v1/billing/usage?apiKeyId=${a.inferenceKeyId}&limit=500`, { key: a.adminSecret });
    const page = (await rest.json()) as { data: unknown[]; pagination: { total: number } };
    expect([rest.status, page.pagination.total, page.data.length]).toEqual([200, byKey.length, byKey.length]);
    const restModel = (await (
      await t.call('/api/v1/billing/usage?modelId=lagoon-llm', { key: a.adminSecret })
    ).json()) as { pagination: { total: number } };
    expect(restModel.pagination.total).toBe(byModel.length);

    const codeOf = (result: { errors?: { extensions?: Record<string, unknown> }[] }) =>
      result.errors?.[0]?.extensions?.code;
    expect(codeOf(await usage({ first: 1, filter: { apiKeyId: 'not-a-key' } }))).toBe('INVALID_REQUEST');
    expect(codeOf(await usage({ first: 1, filter: { modelId: 'bad\u0000id' } }))).toBe('INVALID_REQUEST');
    expect((await t.call('/api/v1/billing/usage?apiKeyId=nope', { key: a.adminSecret })).status).toBe(400);
  });

  it('should link each usage entry to its API key through one batched load', async () => {
    const services = t.app.services;
    const original = services.apiKeys.findByIds.bind(services.apiKeys);
    const loads: string[][] = [];
    services.apiKeys.findByIds = async (auth, ids) => {
      loads.push([...ids]);
      return original(auth, ids);
    };
    try {
      const result = await t.graphql<{
        usage: {
          edges: {
            node: { apiKeyId: string | null; apiKey: { id: string; description: string; apiKeyType: string } | null };
          }[];
        };
      }>(
        '{ usage(first: 50) { edges { node { apiKeyId apiKey { id description apiKeyType } } } } }',
        {},
        a.adminSecret,
      );
      expect(result.errors).toBeUndefined();
      const nodes = result.data!.usage.edges.map((e) => e.node);
      expect(nodes).toHaveLength(expected.length);
      for (const node of nodes) expect(node.apiKey?.id).toBe(node.apiKeyId);
      expect(nodes.find((n) => n.apiKeyId === a.inferenceKeyId)?.apiKey).toEqual({
        id: a.inferenceKeyId,
        description: 'delta inference',
        apiKeyType: 'INFERENCE',
      });
      expect(loads).toHaveLength(1);
      expect(new Set(loads[0])).toEqual(new Set([a.adminKeyId, a.inferenceKeyId]));
    } finally {
      services.apiKeys.findByIds = original;
    }
  });

  it('should never link an entry to a key of another account', async () => {
    await seedEntries(t.app.database.db, a.accountId, [
      {
        at: new Date().toISOString(),
        currency: 'USD',
        amount: '0.001',
        apiKeyId: other.inferenceKeyId,
        model: 'foreign-key-model',
      },
    ]);
    const result = await t.graphql<{ usage: { edges: { node: { apiKeyId: string; apiKey: unknown } }[] } }>(
      '{ usage(first: 5, filter: { modelId: "foreign-key-model" }) { edges { node { apiKeyId apiKey { id description } } } } }',
      {},
      a.adminSecret,
    );
    expect(result.errors).toBeUndefined();
    expect(result.data!.usage.edges.map((e) => e.node)).toEqual([{ apiKeyId: other.inferenceKeyId, apiKey: null }]);
  });

  it('should type unitType and modelType from the contract lists and count only the units of unitType', async () => {
    const g = await scenarioAccount(t.app.services, 'zeta');
    await chargeMixedUnits(t.app.services, g.inference);
    const result = await t.graphql<{
      usageAnalytics: {
        byModel: { modelName: string; unitType: string; modelType: string; totalUnits: number }[];
        byKey: { totalUnits: number }[];
      };
    }>(
      '{ usageAnalytics { byModel { modelName unitType modelType totalUnits } byKey { totalUnits } } }',
      {},
      g.adminSecret,
    );
    expect(result.errors).toBeUndefined();
    const byModel = Object.fromEntries(
      result.data!.usageAnalytics.byModel.map(({ modelName, ...rest }) => [modelName, rest]),
    );
    expect(byModel).toEqual({
      'mixed-llm': { unitType: 'tokens', modelType: 'LLM', totalUnits: 1200 },
      'augment-web-search': { unitType: 'tokens', modelType: 'LLM', totalUnits: 0 },
      'crypto-rpc-ethereum-mainnet': { unitType: 'tokens', modelType: 'LLM', totalUnits: 0 },
    });
    expect(result.data!.usageAnalytics.byKey).toEqual([{ totalUnits: 1200 }]);
  });

  it('should return the balance summary', async () => {
    const result = await t.graphql<{ balance: Record<string, unknown> }>(
      '{ balance { canConsume consumptionCurrency balances { diem usd } diemEpochAllocation } }',
      {},
      a.adminSecret,
    );
    const spentUsd = -expected.filter((e) => e.currency === 'USD').reduce((s, e) => s + e.amount, 0n);
    expect(result.data?.balance).toEqual({
      canConsume: true,
      consumptionCurrency: 'DIEM',
      balances: { diem: '0.0006', usd: formatNano(parseNano('5') - spentUsd) },
      diemEpochAllocation: '0.012',
    });
  });
});
