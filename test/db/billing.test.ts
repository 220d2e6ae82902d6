import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator } from '../../src/auth/auth-context.ts';
import { BillingService } from '../../src/billing/billing.service.ts';
import type { Price, Usage } from '../../src/billing/billing.types.ts';
import { parseNano } from '../../src/billing/money.ts';
import type { Services } from '../../src/services.ts';
import { createTestDatabase, testDatabaseKind } from '../helpers/db.ts';
import { createAccountWithKey, createTestServices } from '../helpers/services.ts';

const usd = (amount: string): Price => ({ usd: parseNano(amount), diem: parseNano(amount) });
const usageOf = (cost: Price, sku = 'test-sku'): Usage => ({
  modelId: 'lagoon-sim-chat',
  modelType: 'LLM',
  unitType: 'tokens',
  lines: [{ sku, lineType: 'Output', units: '1000', pricePerUnitUsd: '0.000002', cost }],
});

// Every rule holds whether calls hold their funds in the database one by one or draw them from balance leases.
describe.each([
  { mode: 'holds per call', balanceLeases: false },
  { mode: 'balance leases', balanceLeases: true },
])(`${BillingService.name} (${testDatabaseKind}, $mode)`, ({ balanceLeases }) => {
  let handle: Awaited<ReturnType<typeof createTestDatabase>>;
  let services: Services;

  beforeAll(async () => {
    handle = await createTestDatabase();
    services = createTestServices(handle.db, { balanceLeases });
  });
  afterAll(async () => {
    await services.stop(); // leases and timers end before their database does
    await handle.drop();
  });

  const balanceOf = async (accountId: string, currency = 'USD') =>
    (await services.billing.balancesOf(accountId)).find((b) => b.currency === currency)!;
  /** Charges written and this process's unused leases given back, so the rows read as if every call held its own. */
  const settledRows = async (accountId: string) => {
    await services.billing.flush(accountId);
    await services.billing.holds.reclaim(accountId);
  };
  const ledgerSum = async (accountId: string) => {
    await settledRows(accountId);
    const rows = await handle.db
      .selectFrom('usage_entries')
      .select('amount')
      .where('account_id', '=', accountId)
      .execute();
    return rows.reduce((sum, row) => sum + row.amount, 0n);
  };

  it('should let exactly 10 of 50 concurrent reservations through a balance that covers 10', async () => {
    const { auth, accountId } = await createAccountWithKey(services, { credit: { USD: '1' } });
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, () => services.billing.reserve(auth, usd('0.1'))),
    );
    const held = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r) => r.status === 'rejected');
    expect(held).toHaveLength(10);
    expect(refused.map((r) => (r as PromiseRejectedResult).reason.code)).toEqual(
      Array(40).fill('INSUFFICIENT_BALANCE'),
    );
    const balance = await balanceOf(accountId);
    expect(balance).toMatchObject({ amount: parseNano('1'), reserved: parseNano('1') });

    // Settle every hold at a cost below the hold: the rest is released and the ledger matches the balance.
    await Promise.all(
      held.map((r) =>
        services.billing.settle(
          (r as PromiseFulfilledResult<Awaited<ReturnType<Services['billing']['reserve']>>>).value,
          usageOf(usd('0.075')),
        ),
      ),
    );
    const after = await balanceOf(accountId);
    expect(after).toMatchObject({ amount: parseNano('0.25'), reserved: 0n });
    expect(await ledgerSum(accountId)).toBe(after.amount - parseNano('1'));
  });

  it('should never overshoot a key period limit under concurrency, with money to spare', async () => {
    const { auth, accountId, keyId } = await createAccountWithKey(services, {
      credit: { USD: '100' },
      type: 'INFERENCE',
      keyInput: { consumptionLimit: { usd: 0.5 }, limitPeriod: 'MONTH' },
    });
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, () => services.billing.reserve(auth, usd('0.04'))),
    );
    const held = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const codes = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as { code: string }).code] : []));
    expect(held).toHaveLength(12); // 12 × 0.04 = 0.48 ≤ 0.5 < 13 × 0.04
    expect(new Set(codes)).toEqual(new Set(['API_KEY_USD_SPEND_LIMIT_EXCEEDED']));
    for (const reservation of held) await services.billing.settle(reservation, usageOf(usd('0.04')));
    await settledRows(accountId);
    const spend = await handle.db
      .selectFrom('api_key_spend')
      .selectAll()
      .where('api_key_id', '=', keyId)
      .executeTakeFirstOrThrow();
    expect(spend.spent_usd).toBe(parseNano('0.48'));
    expect(spend.reserved_usd).toBe(0n);
    expect((await balanceOf(accountId)).amount).toBe(parseNano('99.52'));
    await expect(services.billing.reserve(auth, usd('0.03'))).rejects.toMatchObject({
      code: 'API_KEY_USD_SPEND_LIMIT_EXCEEDED',
    });
    // The account still has funds: only the key is capped.
    await expect(services.billing.reserve(auth, usd('0.02'))).resolves.toMatchObject({ currency: 'USD' });
  });

  it('should charge DIEM first, then BUNDLED_CREDITS, then USD', async () => {
    const { auth, accountId } = await createAccountWithKey(services, {
      credit: { USD: '5', DIEM: '0.1', BUNDLED_CREDITS: '0.2' },
    });
    const first = await services.billing.reserve(auth, usd('0.1'));
    expect(first.currency).toBe('DIEM');
    const second = await services.billing.reserve(auth, usd('0.1'));
    expect(second.currency).toBe('BUNDLED_CREDITS');
    const third = await services.billing.reserve(auth, usd('0.15'));
    expect(third.currency).toBe('USD');
    const settled = await services.billing.settle(first, usageOf(usd('0.1')));
    expect(settled).toMatchObject({ currency: 'DIEM', charged: parseNano('0.1'), balanceAfter: 0n });
    await settledRows(accountId);
    const entry = await handle.db
      .selectFrom('usage_entries')
      .selectAll()
      .where('id', '=', settled.usageEntryIds[0]!)
      .executeTakeFirstOrThrow();
    expect(entry).toMatchObject({
      currency: 'DIEM',
      amount: -parseNano('0.1'),
      sku: 'test-sku',
      account_id: accountId,
    });
    await services.billing.release(second);
    await services.billing.release(third);
    expect((await balanceOf(accountId, 'BUNDLED_CREDITS')).reserved).toBe(0n);
  });

  it('should settle once however often settle is called, and cap a charge at the hold', async () => {
    const { auth, accountId } = await createAccountWithKey(services, { credit: { USD: '1' } });
    const reservation = await services.billing.reserve(auth, usd('0.3'));
    const overrun = usageOf(usd('0.5'));
    const [a, b] = await Promise.all([
      services.billing.settle(reservation, overrun),
      services.billing.settle(reservation, overrun),
    ]);
    expect([a.alreadySettled, b.alreadySettled].sort()).toEqual([false, true]);
    expect((await balanceOf(accountId)).amount).toBe(parseNano('0.7'));
    expect(await ledgerSum(accountId)).toBe(-parseNano('0.3'));
    expect(await services.billing.release(reservation)).toBe(false);
  });

  it.skipIf(balanceLeases)(
    'should release a reservation in full and let the sweeper release expired ones',
    async () => {
      const { auth, accountId } = await createAccountWithKey(services, { credit: { USD: '1' } });
      const released = await services.billing.reserve(auth, usd('0.4'));
      expect(await services.billing.release(released)).toBe(true);
      await services.billing.reserve(auth, usd('0.6'), { ttlMs: 1 });
      expect((await balanceOf(accountId)).reserved).toBe(parseNano('0.6'));
      expect(await services.billing.sweepExpired(new Date(Date.now() + 1000))).toBeGreaterThanOrEqual(1);
      expect(await balanceOf(accountId)).toMatchObject({ amount: parseNano('1'), reserved: 0n });
    },
  );

  it('should refuse a reservation when the only funds are in a key-limited currency group', async () => {
    const { auth } = await createAccountWithKey(services, {
      credit: { DIEM: '10' },
      type: 'INFERENCE',
      keyInput: { consumptionLimit: { diem: 0 } },
    });
    await expect(services.billing.reserve(auth, usd('0.01'))).rejects.toMatchObject({
      code: 'API_KEY_DIEM_SPEND_LIMIT_EXCEEDED',
    });
  });

  it('should refuse an operator debit below zero and keep the ledger of credits', async () => {
    const { accountId } = await createAccountWithKey(services, { credit: { USD: '2' } });
    await expect(
      services.accounts.credit(operator(), { accountId, currency: 'USD', amount: '-3' }),
    ).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    await services.accounts.credit(operator(), { accountId, currency: 'USD', amount: '-0.5', note: 'correction' });
    expect((await balanceOf(accountId)).amount).toBe(parseNano('1.5'));
    const ledger = await handle.db
      .selectFrom('account_ledger')
      .select(['type', 'amount'])
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .execute();
    expect(ledger).toEqual([
      { type: 'TOP_UP', amount: parseNano('2') },
      { type: 'ADJUSTMENT', amount: -parseNano('0.5') },
    ]);
  });

  it('should keep daily rollups equal to the ledger', async () => {
    const { auth, accountId } = await createAccountWithKey(services, { credit: { USD: '3' } });
    for (const cost of ['0.1', '0.2', '0.3']) {
      const reservation = await services.billing.reserve(auth, usd('1'));
      await services.billing.settle(reservation, usageOf(usd(cost)));
    }
    await settledRows(accountId);
    const rollup = await handle.db
      .selectFrom('usage_daily')
      .select(['amount', 'entries'])
      .where('account_id', '=', accountId)
      .execute();
    expect(rollup).toEqual([{ amount: parseNano('0.6'), entries: 3 }]);
    expect(await ledgerSum(accountId)).toBe(-parseNano('0.6'));
  });

  it('should keep the day × model and day × key rollups equal to the daily rollups, late settlements too', async () => {
    const { auth, accountId, adminSecret } = await createAccountWithKey(services, {
      credit: { USD: '5' },
      type: 'INFERENCE',
    });
    const admin = await services.auth.authenticate({ authorization: `Bearer ${adminSecret}` }, 'req');
    const calls = [
      { caller: auth, model: 'model-a', cost: '0.1' },
      { caller: auth, model: 'model-b', cost: '0.2' },
      { caller: admin, model: 'model-a', cost: '0.3' },
      { caller: admin, model: 'model-a', cost: '0.05' },
    ];
    for (const { caller, model, cost } of calls) {
      const reservation = await services.billing.reserve(caller, usd('1'));
      await services.billing.settle(reservation, { ...usageOf(usd(cost)), modelId: model });
    }
    if (!balanceLeases) {
      // Released by the sweeper before it settles: charged directly, outside the batches.
      const late = await services.billing.reserve(auth, usd('1'), { ttlMs: 1 });
      await services.billing.sweepExpired(new Date(Date.now() + 1000));
      await services.billing.settle(late, { ...usageOf(usd('0.4')), modelId: 'model-b' });
    }
    await settledRows(accountId);
    const fine = await handle.db.selectFrom('usage_daily').selectAll().where('account_id', '=', accountId).execute();
    const sums = (
      rows: readonly { amount: bigint; entries: number; units: string }[],
      keyOf: (row: never) => string,
    ) => {
      const out = new Map<string, { amount: bigint; entries: number; units: number }>();
      for (const row of rows) {
        const key = keyOf(row as never);
        const sum = out.get(key) ?? { amount: 0n, entries: 0, units: 0 };
        out.set(key, {
          amount: sum.amount + row.amount,
          entries: sum.entries + row.entries,
          units: sum.units + Number(row.units),
        });
      }
      return out;
    };
    type Row = Record<string, string>;
    const byModel = (row: Row) =>
      [row.day, row.model_id, row.model_type, row.unit_type, row.line_type, row.currency].join('|');
    const byKey = (row: Row) => [row.day, row.api_key_id, row.unit_type, row.line_type, row.currency].join('|');
    const models = await handle.db
      .selectFrom('usage_daily_model')
      .selectAll()
      .where('account_id', '=', accountId)
      .execute();
    const keys = await handle.db
      .selectFrom('usage_daily_key')
      .selectAll()
      .where('account_id', '=', accountId)
      .execute();
    expect(sums(models, byModel)).toEqual(sums(fine, byModel));
    expect(sums(keys, byKey)).toEqual(sums(fine, byKey));
    expect([...sums(fine, () => 'all').values()][0]?.amount).toBe(parseNano(balanceLeases ? '0.65' : '1.05'));
  });
});

describe('money arithmetic', () => {
  it('should use no floating-point arithmetic in the billing core', () => {
    const dir = join(import.meta.dirname, '../../src/billing');
    for (const file of readdirSync(dir).filter((name) => name.endsWith('.ts'))) {
      const source = readFileSync(join(dir, file), 'utf8');
      // Number() and parseFloat() only appear in the edge converters of money.ts.
      const offenders = source
        .split('\n')
        .filter((line) => /parseFloat\(|Math\.(round|floor|ceil)\(|toFixed\(/.test(line));
      expect(offenders, file).toEqual([]);
    }
  });
});

describe(`${BillingService.name}.runMetered (${testDatabaseKind})`, () => {
  let handle: Awaited<ReturnType<typeof createTestDatabase>>;
  let services: Services;
  beforeAll(async () => {
    handle = await createTestDatabase();
    services = createTestServices(handle.db);
  });
  afterAll(async () => {
    await services.stop(); // leases and timers end before their database does
    await handle.drop();
  });

  it('should charge the reported usage on success and nothing when the work fails', async () => {
    const { auth, accountId } = await createAccountWithKey(services, { credit: { USD: '1' } });
    const { result, charge } = await services.billing.runMetered(auth, {
      maxCost: usd('0.05'),
      run: async () => 'done',
      usage: () => usageOf(usd('0.01'), 'augment-search'),
    });
    expect(result).toBe('done');
    expect(charge).toMatchObject({ currency: 'USD', charged: parseNano('0.01'), balanceAfter: parseNano('0.99') });
    await expect(
      services.billing.runMetered(auth, {
        maxCost: usd('0.05'),
        run: async () => Promise.reject(new Error('upstream down')),
        usage: () => usageOf(usd('0.01')),
      }),
    ).rejects.toThrow('upstream down');
    const balance = (await services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD');
    expect(balance).toMatchObject({ amount: parseNano('0.99'), reserved: 0n });
    await expect(
      services.billing.runMetered(auth, {
        maxCost: usd('5'),
        run: async () => 'never',
        usage: () => usageOf(usd('5')),
      }),
    ).rejects.toMatchObject({ code: 'INSUFFICIENT_BALANCE' });
  });
});
