import { describe, expect, it } from 'vitest';
import { createBilling } from '../../src/services.ts';
import type { Price, Usage } from '../../src/billing/billing.types.ts';
import { DEFAULT_LEASE_OPTIONS, type LeaseOptions } from '../../src/billing/lease-options.ts';
import type { LeasePeers } from '../../src/billing/leased-holds.ts';
import { parseNano } from '../../src/billing/money.ts';
import type { Database } from '../../src/db/database.ts';
import { createLogger } from '../../src/logger.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { createAccountWithKey, useTestServices } from '../helpers/services.ts';
import { scaled } from '../helpers/time-scale.ts';

/*
 * Balance leases under faults and races: shutdown with calls running, a database out of reach for seconds, funds
 * held by another process, a slow last write at close, a key limit lowered while a lease is being decided. Each
 * of these once lost or double-counted money.
 */

const usd = (amount: string): Price => ({ usd: parseNano(amount), diem: parseNano(amount) });
const usageOf = (cost: Price): Usage => ({
  modelId: 'review-model',
  modelType: 'LLM',
  unitType: 'tokens',
  lines: [{ sku: 'review-sku', lineType: 'Output', units: '7', pricePerUnitUsd: '0.000001', cost }],
});

describe(`Balance leases under faults (${testDatabaseKind})`, () => {
  const env = useTestServices();

  type Leases = Partial<LeaseOptions> & { peers?: LeasePeers };
  /** Another "process" on the same database. */
  const billingWith = (leases: Leases = {}, db: Database = env.handle.db) =>
    createBilling({
      db,
      logger: createLogger('silent'),
      options: { reservationTimeoutMs: 60_000, leases: { ...DEFAULT_LEASE_OPTIONS, tickMs: 60_000, ...leases } },
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
    const ledger = await env.handle.db
      .selectFrom('account_ledger')
      .select('amount')
      .where('account_id', '=', accountId)
      .where('type', '=', 'CHARGE')
      .execute();
    return {
      ...balance,
      entries: entries.length,
      charged: -entries.reduce((sum, row) => sum + row.amount, 0n),
      ledger: -ledger.reduce((sum, row) => sum + row.amount, 0n),
    };
  };
  /** The database, with every transaction failing while `down.now` is set (a lost connection, a failover). */
  const flakyDatabase = () => {
    const down = { now: false, failed: 0 };
    const db = new Proxy(env.handle.db, {
      get(target, prop) {
        if (prop === 'transaction' && down.now) {
          return () => ({
            execute: async () => {
              down.failed += 1;
              throw new Error('Connection terminated unexpectedly');
            },
          });
        }
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    return { db, down };
  };

  /** The database, with transactions waiting for `gate.open()` while `gate.closed` is set (a slow commit). */
  const gatedDatabase = () => {
    let release: () => void = () => undefined;
    const gate = {
      closed: false,
      waiting: 0,
      wait: Promise.resolve(),
      shut() {
        this.closed = true;
        this.wait = new Promise<void>((resolve) => (release = resolve));
      },
      open() {
        this.closed = false;
        release();
      },
    };
    const db = new Proxy(env.handle.db, {
      get(target, prop) {
        if (prop === 'transaction' && gate.closed) {
          return () => ({
            execute: async (fn: never) => {
              gate.waiting += 1;
              await gate.wait;
              return target.transaction().execute(fn);
            },
          });
        }
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    return { db, gate };
  };

  it('should charge a call once however often it is settled after its lease is gone (shutdown)', async () => {
    const billing = billingWith();
    const { auth, accountId } = await createAccountWithKey(env.services, { credit: { USD: '1' } });
    const running = await billing.reserve(auth, usd('0.1'));
    await billing.close(); // the call still runs: its hold is lost, its settlement is charged directly
    const first = await billing.settle(running, usageOf(usd('0.03')));
    const second = await billing.settle(running, usageOf(usd('0.03')));
    expect(first).toMatchObject({ charged: parseNano('0.03'), alreadySettled: false });
    expect(second).toMatchObject({ charged: 0n, alreadySettled: true });
    expect(await rows(accountId)).toMatchObject({ amount: parseNano('0.97'), entries: 1, charged: parseNano('0.03') });
  });

  it(
    'should not give up a settled charge because the database was unreachable for a few seconds',
    { timeout: scaled(20_000) },
    async () => {
      const { db, down } = flakyDatabase();
      const billing = billingWith({}, db);
      try {
        const { auth, accountId } = await createAccountWithKey(env.services, { credit: { USD: '1' } });
        const call = () =>
          billing.runMetered(auth, { maxCost: usd('0.01'), run: async () => 'ok', usage: () => usageOf(usd('0.005')) });
        await call(); // opens the lease
        await billing.flush(accountId);
        expect(await rows(accountId)).toMatchObject({ entries: 1, amount: parseNano('0.995') });
        // The database goes away for ~7 s; the next call draws from the lease in memory and is answered.
        down.now = true;
        const answered = await call();
        expect(answered.charge.charged).toBe(parseNano('0.005'));
        await new Promise((resolve) => setTimeout(resolve, 7_000));
        expect(down.failed).toBeGreaterThanOrEqual(5);
        down.now = false;
        await billing.flush(accountId);
        // The customer got an answer and was told it cost 0.005: the charge must be written once the database is back.
        expect(await rows(accountId)).toMatchObject({
          entries: 2,
          amount: parseNano('0.99'),
          ledger: parseNano('0.01'),
        });
      } finally {
        down.now = false;
        await billing.close();
      }
    },
  );

  it('should retry a lease during an outage at its backoff steps only, however often its tick runs', async () => {
    const { db, down } = flakyDatabase();
    const lines: string[] = [];
    const billing = createBilling({
      db,
      logger: createLogger('warn', { write: (line: string) => void lines.push(line) }),
      options: { reservationTimeoutMs: 60_000, leases: { ...DEFAULT_LEASE_OPTIONS, tickMs: 10, ttlMs: 30 } },
    });
    try {
      const { auth, accountId } = await createAccountWithKey(env.services, { credit: { USD: '1' } });
      const call = () =>
        billing.runMetered(auth, { maxCost: usd('0.01'), run: async () => 'ok', usage: () => usageOf(usd('0.005')) });
      await call();
      await billing.flush(accountId);
      down.now = true;
      await call(); // settled in memory: the lease has a charge to write
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      // Backoff 200, 400, 800 ms … : a handful of attempts in 2 s, not one per 10 ms tick, and one log line each.
      const retries = lines.filter((line) => line.includes('writing a balance lease update failed')).length;
      expect(retries).toBeGreaterThanOrEqual(2);
      expect(retries).toBeLessThanOrEqual(8);
      expect(down.failed).toBeLessThanOrEqual(retries + 2);
      down.now = false;
      await billing.flush(accountId);
      expect(await rows(accountId)).toMatchObject({ entries: 2, amount: parseNano('0.99') });
    } finally {
      down.now = false;
      await billing.close();
    }
  });

  it('should ask other processes for their unused leases even when it gave back one of its own first', async () => {
    const other = billingWith();
    // Stands for Redis: asking "elsewhere" makes the other process give back its unused leases on the account.
    const billing = billingWith({
      peers: { reclaimElsewhere: async (accountId) => other.holds.reclaim(accountId), answer: () => undefined },
    });
    try {
      const {
        auth: inferenceKey,
        accountId,
        adminSecret,
      } = await createAccountWithKey(env.services, { credit: { USD: '1' }, type: 'INFERENCE' });
      const adminKey = await env.services.auth.authenticate({ authorization: `Bearer ${adminSecret}` }, 'r');
      // The other process leases a quarter of the balance (0.25) for a small call on the admin key, and keeps it idle.
      await other.runMetered(adminKey, {
        maxCost: usd('0.01'),
        run: async () => undefined,
        usage: () => usageOf(usd('0.01')),
      });
      // This process leases some of the rest for a small call on the inference key.
      await billing.runMetered(inferenceKey, {
        maxCost: usd('0.01'),
        run: async () => undefined,
        usage: () => usageOf(usd('0.01')),
      });
      await Promise.all([other.flush(accountId), billing.flush(accountId)]);
      expect(await rows(accountId)).toMatchObject({ amount: parseNano('0.98') });
      // 0.98 is free for calls (no call runs): a call of 0.75 fits once both idle leases are given back.
      const big = await billing.reserve(adminKey, usd('0.75'));
      expect(big.amount).toBe(parseNano('0.75'));
      await billing.release(big);
    } finally {
      await Promise.all([other.close(), billing.close()]);
    }
  });
  it('should not return from close() before a charge settled while the lease was ending is written', async () => {
    const { db, gate } = gatedDatabase();
    const billing = billingWith({}, db);
    const { auth, accountId } = await createAccountWithKey(env.services, { credit: { USD: '1' } });
    const running = await billing.reserve(auth, usd('0.1'));
    gate.shut(); // the shutdown's last lease update takes a moment to commit
    const closing = billing.close();
    while (gate.waiting === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    // The running call ends meanwhile, while the lease's last update is being written.
    const settling = billing.settle(running, usageOf(usd('0.03')));
    // That update commits; whatever the billing writes after it waits at the gate for a while.
    gate.open();
    gate.shut();
    const first = await Promise.race([
      Promise.all([closing, settling]).then(() => 'done' as const),
      new Promise((resolve) => setTimeout(() => resolve('still writing'), 300)),
    ]);
    const atDone = await rows(accountId);
    gate.open();
    await closing;
    expect(await settling).toMatchObject({ charged: parseNano('0.03'), alreadySettled: false });
    // close() promises every pending charge written (the database is closed right after it): once it and the
    // settlement have returned, the settled call's charge must be in the database.
    expect(first === 'done' ? atDone : { amount: parseNano('0.97'), entries: 1 }).toMatchObject({
      amount: parseNano('0.97'),
      entries: 1,
    });
    expect(await rows(accountId)).toMatchObject({ amount: parseNano('0.97'), entries: 1, reserved: 0n });
  });
  // PostgreSQL only: the key edit commits while the lease's transaction is open (PGlite runs one at a time).
  it.skipIf(testDatabaseKind !== 'postgres')(
    'should not open a lease decided under a key limit that was lowered (and its leases closed) meanwhile',
    async () => {
      let release: () => void = () => undefined;
      const gate = { held: false, waiting: 0, wait: new Promise<void>((resolve) => (release = resolve)) };
      // Holds a transaction open after its statements, before COMMIT (a slow commit).
      const db = new Proxy(env.handle.db, {
        get(target, prop) {
          if (prop === 'transaction' && gate.held) {
            return () => ({
              execute: (fn: (trx: unknown) => Promise<unknown>) =>
                target.transaction().execute(async (trx) => {
                  const result = await fn(trx);
                  gate.waiting += 1;
                  await gate.wait;
                  return result;
                }),
            });
          }
          const value: unknown = Reflect.get(target, prop, target);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      const billing = billingWith({}, db);
      try {
        const { auth, keyId, adminSecret } = await createAccountWithKey(env.services, {
          credit: { USD: '10' },
          type: 'INFERENCE',
          keyInput: { consumptionLimit: { usd: 1 } },
        });
        gate.held = true;
        const first = billing.reserve(auth, usd('0.01')); // takes a lease of 0.25 under the limit of 1
        while (gate.waiting === 0) await new Promise((resolve) => setTimeout(resolve, 1));
        gate.held = false;
        // The operator lowers the limit to 0.05; the key cache tells the billing, which ends the key's leases.
        const admin = await env.services.auth.authenticate({ authorization: `Bearer ${adminSecret}` }, 'r');
        await env.services.apiKeys.update(admin, { id: keyId, consumptionLimit: { usd: 0.05 } });
        billing.holds.closeKey(keyId);
        release();
        await billing.settle(await first, usageOf(usd('0.01')));
        // Every later call is decided under the new limit: at most 0.04 more.
        const later = await Promise.allSettled(
          Array.from({ length: 10 }, () =>
            billing.runMetered(auth, {
              maxCost: usd('0.01'),
              run: async () => undefined,
              usage: () => usageOf(usd('0.01')),
            }),
          ),
        );
        await billing.flush();
        const spend = await env.handle.db
          .selectFrom('api_key_spend')
          .select(['spent_usd'])
          .where('api_key_id', '=', keyId)
          .executeTakeFirstOrThrow();
        expect({ served: later.filter((call) => call.status === 'fulfilled').length, spent: spend.spent_usd }).toEqual({
          served: 4,
          spent: parseNano('0.05'),
        });
      } finally {
        release();
        await billing.close();
      }
    },
  );
});
