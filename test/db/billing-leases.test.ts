import { describe, expect, it } from 'vitest';
import { createBilling } from '../../src/services.ts';
import type { Price, Usage } from '../../src/billing/billing.types.ts';
import { DEFAULT_LEASE_OPTIONS, type LeaseOptions } from '../../src/billing/lease-options.ts';
import { parseNano } from '../../src/billing/money.ts';
import { createLogger } from '../../src/logger.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { eventually } from '../helpers/eventually.ts';
import { twoProcesses } from '../helpers/processes.ts';
import { createAccountWithKey, useTestServices } from '../helpers/services.ts';

/*
 * Balance leases: calls draw their holds in memory from a lease the database holds for this process, and their
 * settlements are written after the answer. What must still hold: no balance below zero, nothing charged twice or
 * lost while the process lives, reads see every settled call, and funds held by a dead process come back.
 */

const usd = (amount: string): Price => ({ usd: parseNano(amount), diem: parseNano(amount) });
const usageOf = (cost: Price): Usage => ({
  modelId: 'lease-model',
  modelType: 'LLM',
  unitType: 'tokens',
  lines: [{ sku: 'lease-sku', lineType: 'Output', units: '7', pricePerUnitUsd: '0.000001', cost }],
});

describe(`Balance leases (${testDatabaseKind})`, () => {
  const env = useTestServices();

  /** A billing service of its own (another "process" on the same database) with the given lease timings. */
  const billingWith = (options: Partial<LeaseOptions>) =>
    createBilling({
      db: env.handle.db,
      logger: createLogger('silent'),
      options: { reservationTimeoutMs: 60_000, leases: { ...DEFAULT_LEASE_OPTIONS, ...options } },
    });
  const rows = async (accountId: string) => {
    const balance = await env.handle.db
      .selectFrom('balances')
      .select(['amount', 'reserved'])
      .where('account_id', '=', accountId)
      .where('currency', '=', 'USD')
      .executeTakeFirstOrThrow();
    const entries = await env.handle.db
      .selectFrom('usage_entries')
      .select('amount')
      .where('account_id', '=', accountId)
      .execute();
    const leases = await env.handle.db
      .selectFrom('reservations')
      .select(['status', 'amount', 'lease_holder'])
      .where('account_id', '=', accountId)
      .execute();
    return {
      ...balance,
      entries: entries.length,
      charged: -entries.reduce((sum, row) => sum + row.amount, 0n),
      leases,
    };
  };

  it('should hold one lease for many calls, answer before writing, and show every settled call to the usage reads', async () => {
    const { auth, accountId, adminSecret } = await createAccountWithKey(env.services, { credit: { USD: '10' } });
    const settled = await Promise.all(
      Array.from({ length: 40 }, () =>
        env.services.billing.runMetered(auth, {
          maxCost: usd('0.01'),
          run: async () => 'ok',
          usage: () => usageOf(usd('0.004')),
        }),
      ),
    );
    expect(settled.every((call) => call.charge.charged === parseNano('0.004'))).toBe(true);
    // The last answer's balance counts every charge before it, written or not.
    expect(settled.map((call) => call.charge.balanceAfter).sort((a, b) => (a < b ? -1 : 1))[0]).toBe(parseNano('9.84'));
    const page = await env.services.usage.page(
      await env.services.auth.authenticate({ authorization: `Bearer ${adminSecret}` }, 'r'),
      {},
    );
    expect(page.entries).toHaveLength(40);
    const after = await rows(accountId);
    expect(after).toMatchObject({ amount: parseNano('9.84'), entries: 40, charged: parseNano('0.16') });
    // A few leases at most (one, grown as the calls came), each held for this process, never one per call.
    expect(after.leases.length).toBeLessThanOrEqual(3);
    expect(after.leases.every((lease) => lease.lease_holder !== null)).toBe(true);
    expect(await env.services.billing.balancesOf(accountId)).toContainEqual({
      currency: 'USD',
      amount: parseNano('9.84'),
      reserved: 0n,
    });
  });

  it('should write the charges settled within the write delay together, unasked, and at once when a read needs them', async () => {
    const billing = billingWith({ writeDelayMs: 1_000 });
    try {
      const { auth, accountId } = await createAccountWithKey(env.services, { credit: { USD: '10' } });
      const call = () =>
        billing.runMetered(auth, { maxCost: usd('0.01'), run: async () => 'ok', usage: () => usageOf(usd('0.002')) });
      for (let index = 0; index < 5; index += 1) await call();
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await rows(accountId)).entries).toBe(0); // still waiting for company
      await eventually(async () =>
        expect(await rows(accountId)).toMatchObject({ entries: 5, charged: parseNano('0.01') }),
      );
      await call();
      await billing.flush(accountId); // what a read does first
      expect(await rows(accountId)).toMatchObject({ entries: 6, charged: parseNano('0.012') });
    } finally {
      await billing.close();
    }
  });

  it('should move a lease row’s expiry only by steps over 10 s, so that most writes leave it as it is', async () => {
    const billing = billingWith({ writeDelayMs: 0 });
    try {
      const { auth, accountId } = await createAccountWithKey(env.services, { credit: { USD: '10' } });
      const call = () =>
        billing.runMetered(auth, { maxCost: usd('0.01'), run: async () => 'ok', usage: () => usageOf(usd('0.002')) });
      const lease = () =>
        env.handle.db
          .selectFrom('reservations')
          .select(['id', 'expires_at', 'amount'])
          .where('account_id', '=', accountId)
          .where('lease_holder', 'is not', null)
          .executeTakeFirstOrThrow();
      await call();
      await billing.flush(accountId);
      const first = await lease();
      for (let index = 0; index < 3; index += 1) await call();
      await billing.flush(accountId);
      const later = await lease();
      expect(later.amount).toBeLessThan(first.amount); // written: the charges came off the lease
      expect(later.expires_at).toEqual(first.expires_at); // but the expiry stayed (under 10 s to gain)
      // As if 25 s had passed since the expiry was last moved: the next write moves it a full TTL ahead.
      await env.handle.db
        .updateTable('reservations')
        .set({ expires_at: new Date(Date.now() + 35_000) })
        .where('id', '=', first.id)
        .execute();
      await call();
      await billing.flush(accountId);
      expect((await lease()).expires_at.getTime()).toBeGreaterThan(Date.now() + 55_000);
      expect(await rows(accountId)).toMatchObject({ entries: 5, charged: parseNano('0.01') });
    } finally {
      await billing.close();
    }
  });

  it('should never lend more than the balance, whatever the number of calls at once', async () => {
    const { auth, accountId } = await createAccountWithKey(env.services, { credit: { USD: '1' } });
    const calls = await Promise.allSettled(
      Array.from({ length: 80 }, () => env.services.billing.reserve(auth, usd('0.03'))),
    );
    const held = calls.flatMap((call) => (call.status === 'fulfilled' ? [call.value] : []));
    expect(held).toHaveLength(33); // 33 × 0.03 = 0.99 ≤ 1 < 34 × 0.03
    expect(
      calls.filter((call) => call.status === 'rejected').map((call) => (call as PromiseRejectedResult).reason.code),
    ).toEqual(Array(47).fill('INSUFFICIENT_BALANCE'));
    expect(await env.services.billing.balancesOf(accountId)).toContainEqual({
      currency: 'USD',
      amount: parseNano('1'),
      reserved: parseNano('0.99'),
    });
    for (const reservation of held) await env.services.billing.settle(reservation, usageOf(usd('0.03')));
    await env.services.billing.flush(accountId);
    expect(await rows(accountId)).toMatchObject({ amount: parseNano('0.01'), charged: parseNano('0.99'), entries: 33 });
  });

  it('should serve and charge exactly once every call of a burst that arrives while the lease grows', async () => {
    // Every statement the billing runs lets two more calls in (1,000 in all) and every settled call is written at
    // once, so calls arrive during every update whatever the machine's speed (test/unit/lease-growth.test.ts has
    // the exact order of updates and arrivals that once refused calls of a well-funded account).
    const { auth, accountId } = await createAccountWithKey(env.services, { credit: { USD: '1000' } });
    const calls: Promise<unknown>[] = [];
    const arrive = () => {
      for (let index = 0; index < 2 && calls.length < 1000; index += 1)
        calls.push(
          billing.runMetered(auth, { maxCost: usd('0.01'), run: async () => 'ok', usage: () => usageOf(usd('0.004')) }),
        );
    };
    const db = env.handle.db.withPlugin({
      transformQuery: (args) => args.node,
      transformResult: async (args) => (arrive(), args.result),
    });
    const billing = createBilling({
      db,
      logger: createLogger('silent'),
      options: {
        reservationTimeoutMs: 60_000,
        leases: { ...DEFAULT_LEASE_OPTIONS, callsPerLease: 2, writeDelayMs: 0 },
      },
    });
    try {
      arrive();
      // Until all 1,000 have arrived, not until a quiet spell: on a loaded machine a pause between a settlement and
      // its write looked like the end of the burst (848 calls).
      await eventually(async () => expect(calls.length).toBe(1000), 30_000);
      const outcomes = await Promise.allSettled(calls);
      expect(
        outcomes
          .filter((outcome) => outcome.status === 'rejected')
          .map((outcome) => (outcome as PromiseRejectedResult).reason.code),
      ).toEqual([]);
      expect(outcomes).toHaveLength(1000);
      await billing.flush(accountId);
      expect(await rows(accountId)).toMatchObject({ entries: 1000, charged: parseNano('4') });
    } finally {
      await billing.close();
    }
  });

  it('should release a call held past its timeout, and still charge its late settlement while the lease covers it', async () => {
    const billing = billingWith({ tickMs: 20 });
    const { auth, accountId } = await createAccountWithKey(env.services, { credit: { USD: '1' } });
    const stuck = await billing.reserve(auth, usd('0.2'), { ttlMs: 1 });
    await eventually(async () =>
      expect(await billing.balancesOf(accountId)).toContainEqual({
        currency: 'USD',
        amount: parseNano('1'),
        reserved: 0n,
      }),
    );
    const late = await billing.settle(stuck, usageOf(usd('0.05')));
    expect(late).toMatchObject({ charged: parseNano('0.05'), alreadySettled: false });
    expect(await billing.settle(stuck, usageOf(usd('0.05')))).toMatchObject({ charged: 0n, alreadySettled: true });
    await billing.close();
    expect(await rows(accountId)).toMatchObject({
      amount: parseNano('0.95'),
      reserved: 0n,
      charged: parseNano('0.05'),
      entries: 1,
    });
  });

  it('should give an idle lease back, and write everything and give every lease back on close', async () => {
    const billing = billingWith({ tickMs: 20, idleMs: 50 });
    const { auth, accountId } = await createAccountWithKey(env.services, { credit: { USD: '1' } });
    await billing.runMetered(auth, {
      maxCost: usd('0.01'),
      run: async () => undefined,
      usage: () => usageOf(usd('0.01')),
    });
    expect((await rows(accountId)).reserved).toBeGreaterThan(0n); // the lease is held while calls may come
    await eventually(async () =>
      expect(await rows(accountId)).toMatchObject({ reserved: 0n, entries: 1, amount: parseNano('0.99') }),
    );

    const running = await billing.reserve(auth, usd('0.1'));
    await billing.runMetered(auth, {
      maxCost: usd('0.1'),
      run: async () => undefined,
      usage: () => usageOf(usd('0.02')),
    });
    await billing.close();
    expect(await rows(accountId)).toMatchObject({ reserved: 0n, entries: 2, amount: parseNano('0.97') });
    // A call still running at shutdown lost its hold; its settlement is charged directly if the balance allows.
    expect(await billing.settle(running, usageOf(usd('0.03')))).toMatchObject({ charged: parseNano('0.03') });
    expect(await rows(accountId)).toMatchObject({ reserved: 0n, entries: 3, amount: parseNano('0.94') });
  });

  it('should let the sweeper free the lease of a dead process, and charge what it settles afterwards only from free funds', async () => {
    // No heartbeat before the lease row expires: as if the process stopped.
    const dead = billingWith({ ttlMs: 50, tickMs: 60_000 });
    const { auth, accountId } = await createAccountWithKey(env.services, { credit: { USD: '1' } });
    const call = await dead.reserve(auth, usd('0.1'));
    expect((await rows(accountId)).reserved).toBeGreaterThanOrEqual(parseNano('0.1'));
    expect(await env.services.billing.sweepExpired(new Date(Date.now() + 1_000))).toBeGreaterThanOrEqual(1);
    expect(await rows(accountId)).toMatchObject({ amount: parseNano('1'), reserved: 0n });
    // It comes back to life and settles: the lease is gone, so the charge is taken directly, once.
    expect(await dead.settle(call, usageOf(usd('0.04')))).toMatchObject({ charged: parseNano('0.04') });
    await eventually(async () =>
      expect(await rows(accountId)).toMatchObject({ amount: parseNano('0.96'), reserved: 0n, entries: 1 }),
    );
    await dead.close();
    expect(await rows(accountId)).toMatchObject({ amount: parseNano('0.96'), reserved: 0n, entries: 1 });
  });

  it('should end a key’s leases when its limit changes, so the next call meets the new limit', async () => {
    const { auth, accountId, keyId, adminSecret } = await createAccountWithKey(env.services, {
      credit: { USD: '10' },
      type: 'INFERENCE',
    });
    await env.services.billing.runMetered(auth, {
      maxCost: usd('0.5'),
      run: async () => undefined,
      usage: () => usageOf(usd('0.5')),
    });
    const admin = await env.services.auth.authenticate({ authorization: `Bearer ${adminSecret}` }, 'r');
    await env.services.apiKeys.update(admin, { id: keyId, consumptionLimit: { usd: 0.6 } });
    await expect(env.services.billing.reserve(auth, usd('0.2'))).rejects.toMatchObject({
      code: 'API_KEY_USD_SPEND_LIMIT_EXCEEDED',
    });
    await expect(env.services.billing.reserve(auth, usd('0.1'))).resolves.toMatchObject({ currency: 'USD' });
    expect((await env.services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD')).toMatchObject({
      amount: parseNano('9.5'),
      reserved: parseNano('0.1'),
    });
  });
  it('should make callers faster than the database wait for its writes rather than pile up unwritten charges', async () => {
    const { auth, accountId } = await createAccountWithKey(env.services, { credit: { USD: '100' } });
    const billing = billingWith({ writeDelayMs: 60_000 });
    const calls = 4_500;
    // One call after another on promises alone: the database's answers, which arrive as events, could not be taken
    // before the loop ends unless a call waits for them. Past 2,000 unwritten charges the next call does.
    for (let index = 0; index < calls; index += 1) {
      const reservation = await billing.reserve(auth, usd('0.001'));
      await billing.settle(reservation, usageOf(usd('0.001')));
    }
    const written = await env.handle.db
      .selectFrom('usage_entries')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    expect(Number(written.n)).toBeGreaterThanOrEqual(2_000);
    expect(Number(written.n)).toBeLessThan(calls);
    await billing.close();
    expect((await rows(accountId)).entries).toBe(calls);
  });
});

const REDIS_URL = process.env.REDIS_URL || undefined;

// Two sets of services on one database stand for two API processes; Redis carries the request for unused leases.
describe.skipIf(!REDIS_URL)(`Balance leases across processes (${testDatabaseKind}, needs REDIS_URL)`, () => {
  const processes = twoProcesses(REDIS_URL);

  it('should let a process refused for funds another process leases but does not use get them back, and refuse past the balance', async () => {
    const { first, second, db } = processes;
    const { auth, secret, accountId } = await createAccountWithKey(first, { credit: { USD: '1' } });
    // The first process leases a quarter of the balance and keeps most of it unused.
    await first.billing.runMetered(auth, {
      maxCost: usd('0.05'),
      run: async () => undefined,
      usage: () => usageOf(usd('0.05')),
    });
    const inSecond = await second.auth.authenticate({ authorization: `Bearer ${secret}` }, 'r');
    if (inSecond.kind !== 'apiKey') throw new Error('expected an API key context');
    // 0.95 is left in all; a call of 0.9 fits only with the first process's unused lease given back.
    const big = await second.billing.reserve(inSecond, usd('0.9'));
    expect(big.amount).toBe(parseNano('0.9'));
    await expect(second.billing.reserve(inSecond, usd('0.1'))).rejects.toMatchObject({ code: 'INSUFFICIENT_BALANCE' });
    await second.billing.settle(big, usageOf(usd('0.9')));
    await Promise.all([first.billing.flush(accountId), second.billing.flush(accountId)]);
    const balance = await db
      .selectFrom('balances')
      .select(['amount', 'reserved'])
      .where('account_id', '=', accountId)
      .where('currency', '=', 'USD')
      .executeTakeFirstOrThrow();
    expect(balance.amount).toBe(parseNano('0.05'));
  });
});
