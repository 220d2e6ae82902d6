import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator } from '../../src/auth/auth-context.ts';
import { nanoToNumber, parseNano } from '../../src/billing/money.ts';
import { CSV_COLUMNS } from '../../rest/routes/billing-wire.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import {
  chargeMixedUnits,
  chargeScenario,
  parseCsv,
  scenarioAccount,
  sumBy,
  type ExpectedLine,
  type UsageEntryWire,
} from '../helpers/billing.ts';
import { testDatabaseKind } from '../helpers/db.ts';

const REDIS_URL = process.env.REDIS_URL || undefined;

type WireEntry = UsageEntryWire;
interface UsagePageBody {
  data: WireEntry[];
  pagination: { limit: number; page: number; total: number; totalPages: number };
  warningMessage?: string;
}
type Scenario = Awaited<ReturnType<typeof scenarioAccount>>;

/** A JSON number that came from an exact nano amount, back to the exact amount. */
const nanoOf = (value: number) => parseNano(String(value));

describe(`REST billing read side (${testDatabaseKind}, ${REDIS_URL ? 'redis' : 'in-process'} cache and events)`, () => {
  let t: TestApp;
  let a: Scenario;
  let expected: ExpectedLine[];
  const get = (path: string, key: string, headers: Record<string, string> = {}) =>
    t.call(`/api/v1${path}`, { key, headers });
  const body = async <T>(response: Response | Promise<Response>) => (await response).json() as Promise<T>;

  beforeAll(async () => {
    t = await createTestApp(REDIS_URL ? { REDIS_URL } : {});
    a = await scenarioAccount(t.app.services, 'alpha');
    const b = await scenarioAccount(t.app.services, 'beta');
    expected = await chargeScenario(t.app.services, a);
    await chargeScenario(t.app.services, b);
  });
  afterAll(async () => t.close());

  it('should use the implementations the environment asks for', () => {
    expect(t.app.services.analytics.cacheKind).toBe(REDIS_URL ? 'redis' : 'memory');
    expect(t.app.services.events.kind).toBe(REDIS_URL ? 'redis' : 'memory');
  });

  it('should export exactly the charged entries as JSON, agreeing to the nano-unit', async () => {
    const page = await body<UsagePageBody>(get('/billing/usage?limit=500', a.adminSecret));
    expect(page.pagination).toEqual({ limit: 500, page: 1, total: expected.length, totalPages: 1 });
    const key = (sku: string, currency: string, amount: bigint) => `${sku}|${currency}|${amount}`;
    expect(page.data.map((e) => key(e.sku, e.currency, nanoOf(e.amount))).sort()).toEqual(
      expected.map((e) => key(e.sku, e.currency, e.amount)).sort(),
    );
    expect(
      sumBy(
        page.data,
        (e) => e.currency,
        (e) => nanoOf(e.amount),
      ),
    ).toEqual(
      sumBy(
        expected,
        (e) => e.currency,
        (e) => e.amount,
      ),
    );
    expect(page.data.every((e) => e.amount < 0)).toBe(true);
    const times = page.data.map((e) => Date.parse(e.timestamp));
    expect([...times].sort((x, y) => y - x)).toEqual(times); // newest first by default
    const chat = page.data.find((e) => e.sku === 'lagoon-llm-input-mtoken');
    expect(chat).toMatchObject({
      units: 1200,
      pricePerUnitUsd: 0.000001,
      notes: 'Chat completion',
      inferenceDetails: { inferenceExecutionTime: 812, promptTokens: 1200, completionTokens: 300 },
    });
    const search = page.data.find((e) => e.sku === 'augment-web-search');
    expect(search?.inferenceDetails).toEqual({ requestId: expect.any(String), inferenceExecutionTime: 120 });
    // DIEM entries in a range that starts before the cut-over date (no startDate: the beginning of time).
    expect(page.warningMessage).toMatch(/DIEM.*legacy VCU/);
    const usdOnly = await body<UsagePageBody>(get('/billing/usage?currency=USD', a.adminSecret));
    expect(usdOnly.warningMessage).toBeUndefined();
    expect(usdOnly.data.every((e) => e.currency === 'USD')).toBe(true);
    expect(usdOnly.pagination.total).toBe(expected.filter((e) => e.currency === 'USD').length);
  });

  it('should stream the same entries as CSV with a header row and inferenceDetails flattened', async () => {
    const json = await body<UsagePageBody>(get('/billing/usage?limit=500', a.adminSecret));
    const response = await get('/billing/usage', a.adminSecret, { accept: 'text/csv' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('x-usage-warning')).toMatch(/legacy VCU/);
    const text = await response.text();
    expect(text.endsWith('\r\n')).toBe(true);
    const [header, ...rows] = parseCsv(text);
    expect(header).toEqual([...CSV_COLUMNS]);
    expect(rows).toHaveLength(expected.length);
    rows.forEach((row, index) => {
      const entry = json.data[index]!;
      const cells = Object.fromEntries(header!.map((name, i) => [name, row[i] ?? '']));
      expect(cells.timestamp).toBe(entry.timestamp);
      expect(cells.sku).toBe(entry.sku);
      expect(parseNano(cells.amount!)).toBe(nanoOf(entry.amount));
      expect(Number(cells.units)).toBe(entry.units);
      expect(Number(cells.pricePerUnitUsd)).toBe(entry.pricePerUnitUsd);
      expect(cells.currency).toBe(entry.currency);
      expect(cells['inferenceDetails.requestId']).toBe(entry.inferenceDetails?.requestId ?? '');
      expect(cells['inferenceDetails.promptTokens']).toBe(
        entry.inferenceDetails?.promptTokens === undefined ? '' : String(entry.inferenceDetails.promptTokens),
      );
      // A note a spreadsheet would run as a formula is defused; quotes and commas survive quoting.
      expect(cells.notes).toBe(entry.notes.startsWith('=') ? `'${entry.notes}` : entry.notes);
    });
    expect(
      sumBy(
        rows,
        (row) => row[5]!,
        (row) => parseNano(row[4]!),
      ),
    ).toEqual(
      sumBy(
        expected,
        (e) => e.currency,
        (e) => e.amount,
      ),
    );

    const paged = await get('/billing/usage?limit=2&page=2', a.adminSecret, {
      accept: 'text/csv;q=0.9, application/json;q=0.5',
    });
    expect(paged.headers.get('x-pagination-total')).toBe(String(expected.length));
    const pagedRows = parseCsv(await paged.text());
    expect(pagedRows.slice(1)).toEqual(rows.slice(2, 4));
    const preferJson = await get('/billing/usage?limit=1', a.adminSecret, { accept: 'application/json, text/csv' });
    expect(preferJson.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('should compute analytics totals, byModel, byKey and series that agree with the charges', async () => {
    const analytics = await body<{
      lookback: string;
      byDate: { date: string; USD: number; DIEM: number }[];
      byModel: {
        modelName: string;
        unitType: string;
        modelType: string | null;
        totalUsd: number;
        totalDiem: number;
        totalUnits: number;
        breakdown?: { type: string; usd: number; diem: number; units: number }[];
      }[];
      byModelDaily: Record<string, number>[];
      topModels: string[];
      byKey: {
        apiKeyId: string | null;
        description: string;
        totalUsd: number;
        totalDiem: number;
        totalUnits: number;
      }[];
      byKeyDaily: Record<string, number>[];
      topKeyNames: string[];
    }>(get('/billing/usage-analytics', a.adminSecret));
    const side = (e: ExpectedLine) => (e.currency === 'DIEM' || e.currency === 'VCU' ? 'diem' : 'usd');
    const total = (lines: ExpectedLine[], which: 'usd' | 'diem') =>
      nanoToNumber(-lines.filter((e) => side(e) === which).reduce((s, e) => s + e.amount, 0n));
    expect(analytics.lookback).toBe('7d');
    expect(analytics.byDate).toHaveLength(7);
    const today = new Date().toISOString().slice(0, 10);
    expect(analytics.byDate.at(-1)).toEqual({
      date: `${today}T00:00:00.000Z`,
      USD: total(expected, 'usd'),
      DIEM: total(expected, 'diem'),
    });

    const models = new Map(analytics.byModel.map((m) => [m.modelName, m]));
    expect([...models.keys()].sort()).toEqual([
      'augment-text-parser',
      'augment-web-search',
      'lagoon-image',
      'lagoon-llm',
    ]);
    for (const [name, model] of models) {
      const lines = expected.filter((e) => e.model === name);
      expect({ usd: model.totalUsd, diem: model.totalDiem }).toEqual({
        usd: total(lines, 'usd'),
        diem: total(lines, 'diem'),
      });
    }
    expect(models.get('lagoon-llm')).toMatchObject({ modelType: 'LLM', unitType: 'tokens', totalUnits: 4500 });
    expect(models.get('lagoon-llm')?.breakdown?.map((line) => line.type)).toEqual(['Input', 'Output']);
    const input = expected.filter((e) => e.lineType === 'Input');
    expect(models.get('lagoon-llm')?.breakdown?.[0]).toEqual({
      type: 'Input',
      usd: total(input, 'usd'),
      diem: total(input, 'diem'),
      units: 3600,
    });
    expect(models.get('lagoon-image')).toMatchObject({ modelType: 'IMAGE', unitType: 'images', totalUnits: 1 });
    expect(models.get('lagoon-image')?.breakdown).toBeUndefined();
    // Per-request products report from the same value lists; their requests are not tokens.
    expect(models.get('augment-web-search')).toMatchObject({ modelType: 'LLM', unitType: 'tokens', totalUnits: 0 });
    expect(models.get('augment-text-parser')).toMatchObject({ modelType: 'LLM', unitType: 'tokens', totalUnits: 0 });
    const spend = (m: { totalUsd: number; totalDiem: number }) => m.totalUsd + m.totalDiem;
    expect(analytics.byModel.map(spend)).toEqual([...analytics.byModel.map(spend)].sort((x, y) => y - x));
    expect(analytics.topModels).toEqual(analytics.byModel.map((m) => m.modelName));

    expect(analytics.byKey.map((k) => k.apiKeyId).sort()).toEqual([a.adminKeyId, a.inferenceKeyId].sort());
    for (const key of analytics.byKey) {
      const lines = expected.filter((e) => e.keyId === key.apiKeyId);
      expect({ usd: key.totalUsd, diem: key.totalDiem }).toEqual({
        usd: total(lines, 'usd'),
        diem: total(lines, 'diem'),
      });
      expect(key.description).toBe(key.apiKeyId === a.adminKeyId ? 'alpha admin' : 'alpha inference');
    }
    expect(analytics.topKeyNames).toEqual(analytics.byKey.map((k) => k.description));
    const todayMs = Date.parse(`${today}T00:00:00Z`);
    const modelDay = analytics.byModelDaily.find((d) => d.date === todayMs);
    expect(modelDay).toEqual({
      date: todayMs,
      ...Object.fromEntries(
        [...models.keys()].map((name) => [
          name,
          total(
            expected.filter((e) => e.model === name),
            'diem',
          ),
        ]),
      ),
    });
    const keyDay = analytics.byKeyDaily.find((d) => d.date === todayMs);
    expect(keyDay?.['alpha inference']).toBe(
      total(
        expected.filter((e) => e.keyId === a.inferenceKeyId),
        'diem',
      ),
    );
    expect(analytics.byKeyDaily[0]).toEqual({ date: todayMs - 6 * 86_400_000, 'alpha admin': 0, 'alpha inference': 0 });
  });

  it('should report unit and model types from the contract lists, never adding searches or credits to tokens', async () => {
    const g = await scenarioAccount(t.app.services, 'gamma');
    await chargeMixedUnits(t.app.services, g.inference);
    const analytics = await body<{
      byModel: {
        modelName: string;
        unitType: string;
        modelType: string | null;
        totalUnits: number;
        breakdown?: { type: string; units: number }[];
      }[];
      byKey: { apiKeyId: string | null; totalUnits: number }[];
    }>(get('/billing/usage-analytics', g.adminSecret));
    const models = new Map(analytics.byModel.map((m) => [m.modelName, m]));
    for (const model of analytics.byModel) {
      expect(['tokens', 'images', 'chars', 'minutes', 'seconds'], model.modelName).toContain(model.unitType);
      expect(['LLM', 'IMAGE', 'TTS', 'ASR', 'VIDEO'], model.modelName).toContain(model.modelType);
    }
    // 1000 input + 200 output tokens; the web search request stays in its own breakdown line.
    expect(models.get('mixed-llm')).toMatchObject({ modelType: 'LLM', unitType: 'tokens', totalUnits: 1200 });
    expect(models.get('mixed-llm')?.breakdown).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'Web Search', units: 1 }),
        expect.objectContaining({ type: 'Input', units: 1000 }),
      ]),
    );
    expect(models.get('augment-web-search')).toMatchObject({ modelType: 'LLM', unitType: 'tokens', totalUnits: 0 });
    expect(models.get('crypto-rpc-ethereum-mainnet')).toMatchObject({
      modelType: 'LLM',
      unitType: 'tokens',
      totalUnits: 0,
    });
    expect(analytics.byKey).toEqual([expect.objectContaining({ apiKeyId: g.inferenceKeyId, totalUnits: 1200 })]);
  });

  it('should report balances in the charging order', async () => {
    const spentUsd = -expected.filter((e) => e.currency === 'USD').reduce((s, e) => s + e.amount, 0n);
    const balance = await body<Record<string, unknown>>(get('/billing/balance', a.adminSecret));
    expect(balance).toEqual({
      canConsume: true,
      consumptionCurrency: 'DIEM',
      balances: { diem: 0.0006, usd: nanoToNumber(parseNano('5') - spentUsd) },
      diemEpochAllocation: 0.012,
    });

    const services = t.app.services;
    const op = operator();
    const summary = async (credit: Record<string, string>) => {
      const { account, adminKey } = await services.accounts.create(op, { name: 'order' });
      for (const [currency, amount] of Object.entries(credit))
        await services.accounts.credit(op, { accountId: account.id, currency, amount });
      return services.balance.summary(
        await services.auth.authenticate({ authorization: `Bearer ${adminKey.secret}` }, 'x'),
      );
    };
    expect(await summary({})).toEqual({
      canConsume: false,
      consumptionCurrency: null,
      balances: { diem: 0n, usd: 0n },
      diemEpochAllocation: 0n,
    });
    expect(await summary({ USD: '1', BUNDLED_CREDITS: '1', VCU: '1' })).toMatchObject({
      canConsume: true,
      consumptionCurrency: 'VCU',
      balances: { diem: 0n, usd: parseNano('1') },
    });
    expect(await summary({ USD: '1', BUNDLED_CREDITS: '2' })).toMatchObject({ consumptionCurrency: 'BUNDLED_CREDITS' });
  });

  it('should refuse INFERENCE keys and missing keys on every billing route', async () => {
    for (const path of ['/billing/usage', '/billing/usage-analytics', '/billing/balance']) {
      const inference = await get(path, a.inferenceSecret);
      expect(inference.status).toBe(401);
      expect(await inference.json()).toEqual({ error: 'Admin API key required', code: 'ADMIN_KEY_REQUIRED' });
      const anonymous = await t.call(`/api/v1${path}`, { key: null });
      expect(anonymous.status).toBe(401);
      expect((await anonymous.json()) as { code: string }).toMatchObject({ code: 'AUTHENTICATION_FAILED' });
    }
  });

  it('should never show one account another account’s usage', async () => {
    const other = await scenarioAccount(t.app.services, 'gamma');
    const page = await body<UsagePageBody>(get('/billing/usage', other.adminSecret));
    expect(page).toEqual({ data: [], pagination: { limit: 200, page: 1, total: 0, totalPages: 0 } });
    const csv = await (await get('/billing/usage', other.adminSecret, { accept: 'text/csv' })).text();
    expect(parseCsv(csv)).toEqual([[...CSV_COLUMNS]]);
    const analytics = await body<{ byModel: unknown[]; byKey: unknown[]; byDate: { USD: number; DIEM: number }[] }>(
      get('/billing/usage-analytics?lookback=90d', other.adminSecret),
    );
    expect(analytics.byModel).toEqual([]);
    expect(analytics.byKey).toEqual([]);
    expect(analytics.byDate).toHaveLength(90);
    expect(analytics.byDate.every((d) => d.USD === 0 && d.DIEM === 0)).toBe(true);
    // Alpha's own export still holds exactly its own charges (beta made the same ones).
    expect((await body<UsagePageBody>(get('/billing/usage', a.adminSecret))).pagination.total).toBe(expected.length);
  });

  it.each([
    ['/billing/usage-analytics?lookback=0d', 'lookback'],
    ['/billing/usage-analytics?lookback=91d', 'lookback'],
    ['/billing/usage-analytics?lookback=7', 'lookback'],
    ['/billing/usage-analytics?startDate=2026-01-01', 'endDate'],
    ['/billing/usage-analytics?endDate=2026-01-01', 'startDate'],
    ['/billing/usage-analytics?startDate=2026-01-10&endDate=2026-01-09', 'endDate'],
    ['/billing/usage-analytics?startDate=2026-01-01&endDate=2026-04-01', 'endDate'],
    ['/billing/usage-analytics?lookback=7d&startDate=2026-01-01&endDate=2026-01-02', 'lookback'],
    ['/billing/usage-analytics?startDate=2026-13-01&endDate=2026-12-01', 'startDate'],
    ['/billing/usage?limit=501', 'limit'],
    ['/billing/usage?limit=0', 'limit'],
    ['/billing/usage?limit=abc', 'limit'],
    ['/billing/usage?page=0', 'page'],
    ['/billing/usage?page=1.5', 'page'],
    ['/billing/usage?sortOrder=up', 'sortOrder'],
    ['/billing/usage?currency=EUR', 'currency'],
    ['/billing/usage?startDate=yesterday', 'startDate'],
    ['/billing/usage?startDate=2026-02-01T00:00:00Z&endDate=2026-01-01T00:00:00Z', 'endDate'],
  ])('should answer %s with 400 naming %s', async (path, field) => {
    const response = await get(path, a.adminSecret);
    expect(response.status).toBe(400);
    const error = (await response.json()) as { error: string; code: string; issues: { path: string[] }[] };
    expect(error.code).toBe('INVALID_REQUEST');
    expect(error.error).toContain(field);
    expect(error.issues.map((issue) => issue.path.join('.'))).toContain(field);
  });

  it('should serve analytics from the cache for the same parameters', async () => {
    const first = await body<{ byDate: { USD: number }[] }>(get('/billing/usage-analytics?lookback=2d', a.adminSecret));
    await chargeScenario(t.app.services, a);
    const cached = await body<{ byDate: { USD: number }[] }>(
      get('/billing/usage-analytics?lookback=2d', a.adminSecret),
    );
    expect(cached).toEqual(first);
    const fresh = await body<{ byDate: { USD: number }[] }>(get('/billing/usage-analytics?lookback=3d', a.adminSecret));
    expect(fresh.byDate.at(-1)!.USD).toBeGreaterThan(first.byDate.at(-1)!.USD);
  });
});
