import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Price, Usage } from '../../src/billing/billing.types.ts';
import { parseNano } from '../../src/billing/money.ts';
import { createLogger } from '../../src/logger.ts';
import { createBilling, type Services } from '../../src/services.ts';
import { createTestDatabase, testDatabaseKind } from '../helpers/db.ts';
import { createAccountWithKey, createTestServices } from '../helpers/services.ts';

/*
 * The batched hot path (reserve and settle calls on one account share a transaction): the same answers as one call
 * at a time, whatever mix of calls lands in a batch.
 */

const both = (amount: string): Price => ({ usd: parseNano(amount), diem: parseNano(amount) });
const usageOf = (cost: Price, model = 'hot-model', units = '10'): Usage => ({
  modelId: model,
  modelType: 'LLM',
  unitType: 'tokens',
  lines: [
    {
      sku: `${model}-in`,
      lineType: 'Input',
      units,
      pricePerUnitUsd: '0.000001',
      cost: { usd: cost.usd / 2n, diem: cost.diem / 2n },
    },
    {
      sku: `${model}-out`,
      lineType: 'Output',
      units,
      pricePerUnitUsd: '0.000002',
      cost: { usd: cost.usd - cost.usd / 2n, diem: cost.diem - cost.diem / 2n },
    },
  ],
});

describe.each([
  { mode: 'holds per call', balanceLeases: false },
  { mode: 'balance leases', balanceLeases: true },
])(`BillingService hot path (${testDatabaseKind}, $mode)`, ({ balanceLeases }) => {
  let handle: Awaited<ReturnType<typeof createTestDatabase>>;
  let services: Services;

  beforeAll(async () => {
    handle = await createTestDatabase();
    services = createTestServices(handle.db, { balanceLeases });
  });
  /** Charges written and this process's unused leases given back, so the rows read as if every call held its own. */
  const settledRows = async (accountId: string) => {
    await services.billing.flush(accountId);
    await services.billing.holds.reclaim(accountId);
  };
  afterAll(async () => {
    await services.stop(); // leases and timers end before their database does
    await handle.drop();
  });

  const balanceOf = async (accountId: string, currency = 'USD') =>
    (await services.billing.balancesOf(accountId)).find((b) => b.currency === currency)!;
  const totals = async (accountId: string) => {
    await settledRows(accountId);
    const entries = await handle.db
      .selectFrom('usage_entries')
      .select(['amount', 'reservation_id'])
      .where('account_id', '=', accountId)
      .execute();
    const ledger = await handle.db
      .selectFrom('account_ledger')
      .select('amount')
      .where('account_id', '=', accountId)
      .where('type', '=', 'CHARGE')
      .execute();
    const rollups = await handle.db
      .selectFrom('usage_daily')
      .select(['amount', 'entries', 'units'])
      .where('account_id', '=', accountId)
      .execute();
    return {
      entries: entries.length,
      entrySum: entries.reduce((sum, row) => sum + row.amount, 0n),
      reservationsWithEntries: new Set(entries.map((row) => row.reservation_id)).size,
      ledgerSum: ledger.reduce((sum, row) => sum + row.amount, 0n),
      ledgerCount: ledger.length,
      rollupSum: rollups.reduce((sum, row) => sum + row.amount, 0n),
      rollupEntries: rollups.reduce((sum, row) => sum + row.entries, 0),
    };
  };

  it('should keep balance, key spend, entries, ledger and rollups in step under many concurrent paid calls', async () => {
    const { auth, accountId, keyId } = await createAccountWithKey(services, {
      credit: { USD: '1', DIEM: '0.3' },
      type: 'INFERENCE',
      keyInput: { consumptionLimit: { usd: 0.5 }, limitPeriod: 'MONTH' },
    });
    // 60 calls of up to 0.02 each: DIEM pays the first 15, then USD until the key's 0.5 USD limit stops it.
    const results = await Promise.allSettled(
      Array.from({ length: 60 }, (_, index) =>
        services.billing.runMetered(auth, {
          maxCost: both('0.02'),
          run: async () => index,
          usage: () => usageOf(both(index % 2 === 0 ? '0.02' : '0.01'), index % 3 === 0 ? 'model-a' : 'model-b'),
        }),
      ),
    );
    const charges = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.charge] : []));
    const refusals = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as { code: string }).code] : []));
    expect(new Set(refusals)).toEqual(new Set(['API_KEY_USD_SPEND_LIMIT_EXCEEDED']));
    // Holding per call, the 60 holds are taken at once: 15 × 0.02 fill DIEM. Drawn from leases, calls that settled
    // below their hold leave room for more.
    if (balanceLeases) expect(charges.filter((c) => c.currency === 'DIEM').length).toBeGreaterThanOrEqual(15);
    else expect(charges.filter((c) => c.currency === 'DIEM')).toHaveLength(15);
    const usd = charges.filter((c) => c.currency === 'USD');
    expect(usd.length).toBeGreaterThanOrEqual(25); // 25 × 0.02 = 0.5 held at most at once; settling below the hold frees room
    const chargedUsd = usd.reduce((sum, c) => sum + c.charged, 0n);
    const chargedDiem = charges.filter((c) => c.currency === 'DIEM').reduce((sum, c) => sum + c.charged, 0n);
    expect(chargedUsd).toBeLessThanOrEqual(parseNano('0.5'));
    expect(chargedDiem).toBeLessThanOrEqual(parseNano('0.3'));
    await settledRows(accountId);

    expect(await balanceOf(accountId)).toMatchObject({ amount: parseNano('1') - chargedUsd, reserved: 0n });
    expect(await balanceOf(accountId, 'DIEM')).toMatchObject({ amount: parseNano('0.3') - chargedDiem, reserved: 0n });
    const spend = await handle.db
      .selectFrom('api_key_spend')
      .selectAll()
      .where('api_key_id', '=', keyId)
      .executeTakeFirstOrThrow();
    expect(spend).toMatchObject({
      spent_usd: chargedUsd,
      reserved_usd: 0n,
      spent_diem: chargedDiem,
      reserved_diem: 0n,
    });
    const sums = await totals(accountId);
    expect(sums).toMatchObject({
      entries: charges.length * 2,
      ledgerCount: charges.length,
      rollupEntries: charges.length * 2,
    });
    if (!balanceLeases) expect(sums.reservationsWithEntries).toBe(charges.length); // with leases, entries name their lease
    expect(sums.entrySum).toBe(-(chargedUsd + chargedDiem));
    expect(sums.ledgerSum).toBe(sums.entrySum);
    expect(sums.rollupSum).toBe(chargedUsd + chargedDiem);
    // Every settled reservation is settled once; none is left held.
    const statuses = await handle.db
      .selectFrom('reservations')
      .select(['status', 'lease_holder'])
      .where('account_id', '=', accountId)
      .execute();
    expect(statuses.filter((s) => s.status === 'held')).toEqual([]);
    if (!balanceLeases) expect(statuses.filter((s) => s.status === 'settled')).toHaveLength(charges.length);
  });

  it('should fall back to the next currency when the first one’s key limit blocks, and name that limit when none fits', async () => {
    const { auth, accountId } = await createAccountWithKey(services, {
      credit: { DIEM: '5', BUNDLED_CREDITS: '0.05', USD: '1' },
      type: 'INFERENCE',
      keyInput: { consumptionLimit: { diem: 0.1, usd: 0.3 } },
    });
    // DIEM has the money but its key limit (0.1) stops the second call: BUNDLED_CREDITS, then USD take over.
    const [first, second, third] = await Promise.all([
      services.billing.reserve(auth, both('0.08')),
      services.billing.reserve(auth, both('0.05')),
      services.billing.reserve(auth, both('0.05')),
    ]);
    expect([first.currency, second.currency, third.currency]).toEqual(['DIEM', 'BUNDLED_CREDITS', 'USD']);
    // USD limit 0.3 with 0.05 held: 0.3 more does not fit; the DIEM limit refused first, so it is the one named.
    await expect(services.billing.reserve(auth, both('0.3'))).rejects.toMatchObject({
      code: 'API_KEY_DIEM_SPEND_LIMIT_EXCEEDED',
    });
    await services.billing.settle(first, usageOf(both('0.02')));
    // Settling below the hold gives room back under the DIEM limit: 0.02 spent of 0.1.
    await expect(services.billing.reserve(auth, both('0.08'))).resolves.toMatchObject({ currency: 'DIEM' });
    expect(await balanceOf(accountId, 'DIEM')).toMatchObject({
      amount: parseNano('4.98'),
      reserved: parseNano('0.08'),
    });
  });

  it('should refuse with INSUFFICIENT_BALANCE when no balance covers the cost, even with a key limit set', async () => {
    const { auth } = await createAccountWithKey(services, {
      credit: { USD: '0.01' },
      type: 'INFERENCE',
      keyInput: { consumptionLimit: { usd: 1 } },
    });
    await expect(services.billing.reserve(auth, both('0.02'))).rejects.toMatchObject({ code: 'INSUFFICIENT_BALANCE' });
    await expect(services.billing.reserve(auth, both('0.01'))).resolves.toMatchObject({
      currency: 'USD',
      amount: parseNano('0.01'),
    });
  });

  it.skipIf(balanceLeases)(
    'should charge a late settlement once after the sweeper released its reservation, however often it is settled',
    async () => {
      const { auth, accountId } = await createAccountWithKey(services, { credit: { USD: '1' } });
      const reservation = await services.billing.reserve(auth, both('0.2'), { ttlMs: 1 });
      expect(await services.billing.sweepExpired(new Date(Date.now() + 1000))).toBeGreaterThanOrEqual(1);
      expect(await balanceOf(accountId)).toMatchObject({ amount: parseNano('1'), reserved: 0n });
      const [a, b] = await Promise.all([
        services.billing.settle(reservation, usageOf(both('0.1'))),
        services.billing.settle(reservation, usageOf(both('0.1'))),
      ]);
      const again = await services.billing.settle(reservation, usageOf(both('0.1')));
      expect([a.alreadySettled, b.alreadySettled, again.alreadySettled].sort()).toEqual([false, true, true]);
      expect([a, b, again].reduce((sum, c) => sum + c.charged, 0n)).toBe(parseNano('0.1'));
      expect(await balanceOf(accountId)).toMatchObject({ amount: parseNano('0.9'), reserved: 0n });
      const sums = await totals(accountId);
      expect(sums).toMatchObject({
        entries: 2,
        ledgerCount: 1,
        entrySum: -parseNano('0.1'),
        rollupSum: parseNano('0.1'),
      });
      expect(await services.billing.release(reservation)).toBe(false);
    },
  );

  it.skipIf(balanceLeases)('should charge a late settlement the balance cannot cover as debt, once', async () => {
    const { auth, accountId } = await createAccountWithKey(services, { credit: { USD: '0.3' } });
    const reservation = await services.billing.reserve(auth, both('0.3'), { ttlMs: 1 });
    await services.billing.sweepExpired(new Date(Date.now() + 1000));
    const other = await services.billing.reserve(auth, both('0.25')); // the freed money is held by another call
    const late = await services.billing.settle(reservation, usageOf(both('0.1')));
    expect(late).toMatchObject({ charged: parseNano('0.1'), balanceAfter: parseNano('0.2'), alreadySettled: false });
    expect(late.usageEntryIds).toHaveLength(2);
    expect(await balanceOf(accountId)).toMatchObject({ amount: parseNano('0.2'), reserved: parseNano('0.25') });
    await services.billing.release(other);
    expect(await services.billing.settle(reservation, usageOf(both('0.1')))).toMatchObject({
      charged: 0n,
      alreadySettled: true,
    });
    expect(await balanceOf(accountId)).toMatchObject({ amount: parseNano('0.2'), reserved: 0n });
    expect(await totals(accountId)).toMatchObject({
      entries: 2,
      ledgerCount: 1,
      entrySum: -parseNano('0.1'),
      rollupSum: parseNano('0.1'),
    });
  });

  it('should keep one call’s failure its own when it shares a batch with others', async () => {
    const { auth, accountId } = await createAccountWithKey(services, { credit: { USD: '1' } });
    const [good, bad] = await Promise.all([
      services.billing.reserve(auth, both('0.1')),
      services.billing.reserve(auth, both('0.1')),
    ]);
    // Units that PostgreSQL cannot read as a number fail the statement, and with it the batch they were in.
    const outcomes = await Promise.allSettled([
      services.billing.settle(good, usageOf(both('0.1'))),
      services.billing.settle(bad, usageOf(both('0.1'), 'hot-model', 'not-a-number')),
      services.billing.reserve(auth, both('0.2')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await balanceOf(accountId)).toMatchObject({ amount: parseNano('0.9'), reserved: parseNano('0.3') });
    // The failed settlement left its hold in place: it can be settled properly or released later.
    await expect(services.billing.settle(bad, usageOf(both('0.05')))).resolves.toMatchObject({
      charged: parseNano('0.05'),
      alreadySettled: false,
    });
  });

  it('should hold and settle on several accounts and keys at once without mixing them up', async () => {
    const accounts = await Promise.all(
      Array.from({ length: 4 }, () => createAccountWithKey(services, { credit: { USD: '1' } })),
    );
    const second = await services.apiKeys.create(
      await services.auth.authenticate({ authorization: `Bearer ${accounts[0]!.adminSecret}` }, 'setup'),
      { apiKeyType: 'INFERENCE', description: 'second key' },
    );
    const secondAuth = await services.auth.authenticate({ authorization: `Bearer ${second.secret}` }, 'req');
    if (secondAuth.kind !== 'apiKey') throw new Error('expected an API key context');
    const calls = [...accounts.map((a) => a.auth), secondAuth].flatMap((auth) =>
      Array.from({ length: 10 }, () => auth),
    );
    await Promise.all(
      calls.map((auth) =>
        services.billing.runMetered(auth, {
          maxCost: both('0.05'),
          run: async () => undefined,
          usage: () => usageOf(both('0.03')),
        }),
      ),
    );
    expect(await balanceOf(accounts[0]!.accountId)).toMatchObject({ amount: parseNano('0.4'), reserved: 0n });
    for (const account of accounts.slice(1))
      expect(await balanceOf(account.accountId)).toMatchObject({ amount: parseNano('0.7'), reserved: 0n });
    await settledRows(accounts[0]!.accountId);
    const spends = await handle.db
      .selectFrom('api_key_spend')
      .select(['api_key_id', 'spent_usd', 'reserved_usd'])
      .where('api_key_id', 'in', [accounts[0]!.keyId, secondAuth.apiKey.id])
      .execute();
    expect(spends.map((s) => [s.spent_usd, s.reserved_usd])).toEqual([
      [parseNano('0.3'), 0n],
      [parseNano('0.3'), 0n],
    ]);
  });

  it('should fail a reservation for a key that no longer exists without failing the account’s other calls', async () => {
    const { auth, accountId, keyId, adminSecret } = await createAccountWithKey(services, {
      credit: { USD: '1' },
      type: 'INFERENCE',
    });
    const admin = await services.auth.authenticate({ authorization: `Bearer ${adminSecret}` }, 'req');
    await handle.db.deleteFrom('api_keys').where('id', '=', keyId).execute(); // behind the auth cache's back
    const results = await Promise.allSettled([
      services.billing.reserve(auth, both('0.1')),
      services.billing.reserve(admin, both('0.1')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled']);
    expect(await balanceOf(accountId)).toMatchObject({ amount: parseNano('1'), reserved: parseNano('0.1') });
  });

  it('should log a failed batch before running its calls one by one', async () => {
    const lines: string[] = [];
    const billing = createBilling({
      db: handle.db,
      logger: createLogger('warn', { write: (line: string) => void lines.push(line) }),
      options: { reservationTimeoutMs: 60_000 },
    });
    const { auth, keyId, adminSecret } = await createAccountWithKey(services, {
      credit: { USD: '1' },
      type: 'INFERENCE',
    });
    const admin = await services.auth.authenticate({ authorization: `Bearer ${adminSecret}` }, 'req');
    await handle.db.deleteFrom('api_keys').where('id', '=', keyId).execute(); // its key spend row cannot be created any more
    const outcomes = await Promise.allSettled([
      billing.reserve(auth, both('0.1')),
      billing.reserve(admin, both('0.1')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'fulfilled']);
    expect(lines.filter((line) => line.includes('billing batch failed'))).toHaveLength(1);
    await billing.close();
  });
});
