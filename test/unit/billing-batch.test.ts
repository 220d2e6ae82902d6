import { describe, expect, it } from 'vitest';
import {
  accountsOf,
  firstSettles,
  keySpendRowsOf,
  missingReserveRows,
  planBatch,
  settleWinners,
  type BillingOp,
  type LockedKeySpend,
  type ReserveOp,
  type SettleOp,
} from '../../src/billing/billing-batch.ts';
import type { Reservation } from '../../src/billing/billing.types.ts';
import { GroupCommitQueue, type ItemOutcome } from '../../src/billing/group-commit.ts';
import { parseNano } from '../../src/billing/money.ts';

const KEY = 'key-1';
const PERIOD = new Date('2026-11-01T00:00:00Z');
const PREVIOUS = new Date('2026-10-01T00:00:00Z');
const n = parseNano;

const reserve = (amount: string, diem = amount): ReserveOp => ({
  kind: 'reserve',
  accountId: 'acc',
  apiKeyId: KEY,
  keyPeriodStart: PERIOD,
  maxCost: { usd: n(amount), diem: n(diem) },
  requestId: 'req',
  expiresAt: new Date('2026-11-02T00:00:00Z'),
});

const held = (id: string, currency: Reservation['currency'], amount: string, keyPeriodStart = PERIOD): Reservation => ({
  id,
  accountId: 'acc',
  apiKeyId: KEY,
  currency,
  amount: n(amount),
  keyPeriodStart,
  requestId: `req-${id}`,
});
const settle = (reservation: Reservation, charged: string): SettleOp => ({
  kind: 'settle',
  reservation,
  charged: n(charged),
  entries: [],
  modelId: 'm',
  createdAt: new Date('2026-11-01T12:00:00Z'),
});

const spend = (overrides: Partial<LockedKeySpend> = {}): LockedKeySpend => ({
  api_key_id: KEY,
  period_start: PERIOD,
  spent_usd: 0n,
  reserved_usd: 0n,
  spent_diem: 0n,
  reserved_diem: 0n,
  limit_usd: null,
  limit_diem: null,
  ...overrides,
});
const balance = (currency: string, amount: string, reserved = '0', account_id = 'acc') => ({
  account_id,
  currency,
  amount: n(amount),
  reserved: n(reserved),
});
const allWinners = (ops: readonly BillingOp[]) =>
  new Set(ops.flatMap((op, index) => (op.kind === 'settle' ? [index] : [])));

describe('planBatch', () => {
  it('should decide reservations in order, as one call at a time would, never past the balance', () => {
    const ops = [reserve('0.4'), reserve('0.4'), reserve('0.4'), reserve('0.2')];
    const plan = planBatch(ops, new Set(), [balance('USD', '1')], [spend()]);
    expect(plan.outcomes.map((o) => o.kind)).toEqual(['reserved', 'reserved', 'refused', 'reserved']);
    expect(plan.balanceChanges).toEqual([{ accountId: 'acc', currency: 'USD', amount: 0n, reserved: n('1') }]);
    expect(plan.keySpendChanges).toEqual([
      { apiKeyId: KEY, periodStart: PERIOD, spentUsd: 0n, reservedUsd: n('1'), spentDiem: 0n, reservedDiem: 0n },
    ]);
    expect(new Set(plan.reservations.map((r) => r.id)).size).toBe(3);
  });

  it('should hold a wallet (no key) in USD only, with no key spend, keeping its minimum balance free', () => {
    const wallet = (amount: string): ReserveOp => ({
      ...reserve(amount),
      apiKeyId: null,
      keyPeriodStart: null,
      currencies: ['USD'],
      minimumFree: n('0.1'),
    });
    const ops = [wallet('0.5'), wallet('0.4'), wallet('0.05'), wallet('0.05')];
    const plan = planBatch(ops, new Set(), [balance('DIEM', '5'), balance('USD', '1')], []);
    // 0.5 leaves 0.5 free, 0.4 leaves 0.1; 0.05 fits (0.1 free covers max(0.05, minimum 0.1)) and leaves 0.05,
    // below the minimum: the last is refused. DIEM is never used.
    expect(plan.outcomes.map((o) => (o.kind === 'reserved' ? o.reservation.currency : o.kind))).toEqual([
      'USD',
      'USD',
      'USD',
      'refused',
    ]);
    expect(plan.keySpendChanges).toEqual([]);
    expect(plan.reservations.every((r) => r.apiKeyId === null && r.keyPeriodStart === null)).toBe(true);
  });

  it('should follow the charging order, skipping a currency whose key limit is used up', () => {
    const ops = [reserve('0.1', '0.2'), reserve('0.1', '0.2'), reserve('0.1', '0.2')];
    const balances = [balance('USD', '5'), balance('DIEM', '5'), balance('BUNDLED_CREDITS', '0.1')];
    const plan = planBatch(ops, new Set(), balances, [spend({ limit_diem: n('0.2') })]);
    const currencies = plan.outcomes.map((o) => (o.kind === 'reserved' ? o.reservation.currency : o.kind));
    expect(currencies).toEqual(['DIEM', 'BUNDLED_CREDITS', 'USD']);
    expect(plan.outcomes.map((o) => (o.kind === 'reserved' ? o.reservation.amount : 0n))).toEqual([
      n('0.2'),
      n('0.1'),
      n('0.1'),
    ]);
  });

  it('should name the first key limit that refused when no currency fits', () => {
    const plan = planBatch(
      [reserve('1')],
      new Set(),
      [balance('DIEM', '5'), balance('USD', '5')],
      [spend({ limit_diem: n('0.5'), limit_usd: n('0.5') })],
    );
    expect(plan.outcomes).toEqual([{ kind: 'refused', blockedBy: 'diem' }]);
    const broke = planBatch([reserve('1')], new Set(), [balance('USD', '0.5')], [spend({ limit_usd: n('10') })]);
    expect(broke.outcomes).toEqual([{ kind: 'refused', blockedBy: undefined }]);
    expect(broke.balanceChanges).toEqual([]);
  });

  it('should let a settlement earlier in the batch free room for a later reservation', () => {
    const reservation = held('r1', 'USD', '0.8');
    const ops: BillingOp[] = [reserve('0.5'), settle(reservation, '0.3'), reserve('0.5')];
    const plan = planBatch(
      ops,
      allWinners(ops),
      [balance('USD', '1', '0.8')],
      [spend({ reserved_usd: n('0.8'), limit_usd: n('1') })],
    );
    expect(plan.outcomes.map((o) => o.kind)).toEqual(['refused', 'settled', 'reserved']);
    const settled = plan.outcomes[1];
    expect(settled?.kind === 'settled' ? settled.charge : undefined).toMatchObject({
      charged: n('0.3'),
      balanceAfter: n('0.7'),
    });
    expect(plan.balanceChanges).toEqual([
      { accountId: 'acc', currency: 'USD', amount: -n('0.3'), reserved: -n('0.3') },
    ]);
    expect(plan.ledger).toEqual([
      expect.objectContaining({ amount: -n('0.3'), balanceAfter: n('0.7'), currency: 'USD' }),
    ]);
  });

  it('should settle a reservation of a past period against that period, never taking reserved below zero', () => {
    const reservation = held('r1', 'DIEM', '0.5', PREVIOUS);
    const plan = planBatch(
      [settle(reservation, '0.5')],
      new Set([0]),
      [balance('DIEM', '1', '0.5')],
      [spend({ period_start: PREVIOUS, reserved_diem: n('0.2') })],
    );
    expect(plan.keySpendChanges).toEqual([
      {
        apiKeyId: KEY,
        periodStart: PREVIOUS,
        spentUsd: 0n,
        reservedUsd: 0n,
        spentDiem: n('0.5'),
        reservedDiem: -n('0.2'),
      },
    ]);
  });

  it('should not charge a settlement whose reservation was not claimed, nor write a ledger entry for a zero charge', () => {
    const ops: BillingOp[] = [settle(held('gone', 'USD', '0.1'), '0.1'), settle(held('free', 'USD', '0.1'), '0')];
    const plan = planBatch(ops, new Set([1]), [balance('USD', '1', '0.1')], [spend({ reserved_usd: n('0.1') })]);
    expect(plan.outcomes.map((o) => o.kind)).toEqual(['unheld', 'settled']);
    expect(plan.ledger).toEqual([]);
    expect(plan.balanceChanges).toEqual([{ accountId: 'acc', currency: 'USD', amount: 0n, reserved: -n('0.1') }]);
  });

  it('should keep the accounts of a batch apart: one account never pays for another', () => {
    const other: ReserveOp = { ...reserve('0.6'), accountId: 'acc-2', apiKeyId: 'key-2' };
    const ops: BillingOp[] = [reserve('0.6'), other, { ...other }];
    const plan = planBatch(
      ops,
      new Set(),
      [balance('USD', '1'), balance('USD', '1', '0', 'acc-2')],
      [spend(), spend({ api_key_id: 'key-2' })],
    );
    expect(plan.outcomes.map((o) => (o.kind === 'reserved' ? o.reservation.accountId : o.kind))).toEqual([
      'acc',
      'acc-2',
      'refused',
    ]);
    expect(plan.balanceChanges).toEqual([
      { accountId: 'acc', currency: 'USD', amount: 0n, reserved: n('0.6') },
      { accountId: 'acc-2', currency: 'USD', amount: 0n, reserved: n('0.6') },
    ]);
  });

  it('should fail the batch rather than guess when a settled currency has no balance row', () => {
    expect(() => planBatch([settle(held('r', 'VCU', '0.1'), '0.1')], new Set([0]), [balance('USD', '1')], [])).toThrow(
      /No VCU balance row/,
    );
  });
});

describe('batch helpers', () => {
  it('should let only the first settle of a reservation in a batch charge, and only if it was claimed', () => {
    const r1 = held('r1', 'USD', '0.1');
    const r2 = held('r2', 'USD', '0.1');
    const ops: BillingOp[] = [settle(r1, '0.1'), reserve('0.1'), settle(r1, '0.1'), settle(r2, '0.1')];
    const candidates = firstSettles(ops);
    expect([...candidates]).toEqual([0, 3]);
    expect([...settleWinners(ops, candidates, new Set(['r1']))]).toEqual([0]);
  });

  it('should list each touched key spend row once, and the missing ones only for reserving keys', () => {
    const ops: BillingOp[] = [reserve('0.1'), reserve('0.2'), settle(held('old', 'USD', '0.1', PREVIOUS), '0.1')];
    expect(keySpendRowsOf(ops)).toEqual([
      { apiKeyId: KEY, periodStart: PREVIOUS },
      { apiKeyId: KEY, periodStart: PERIOD },
    ]);
    expect(missingReserveRows(ops, [])).toEqual([{ apiKeyId: KEY, periodStart: PERIOD }]);
    expect(missingReserveRows(ops, [spend()])).toEqual([]);
    expect(accountsOf([{ ...reserve('1'), accountId: 'b' }, ...ops, { ...reserve('1'), accountId: 'a' }])).toEqual([
      'a',
      'acc',
      'b',
    ]);
  });
});

describe('GroupCommitQueue', () => {
  const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

  it('should run items of one key in batches, one batch at a time, and keys independently', async () => {
    const batches: string[][] = [];
    let running = 0;
    let maxRunning = 0;
    const gates: (() => void)[] = [];
    const queue = new GroupCommitQueue<string, string>(async (key, items) => {
      batches.push([key, ...items]);
      running += 1;
      maxRunning = Math.max(maxRunning, running);
      await new Promise<void>((resolve) => gates.push(resolve));
      running -= 1;
      return items.map((item): ItemOutcome<string> => ({ ok: true, value: item.toUpperCase() }));
    });
    const first = [queue.submit('a', 'x'), queue.submit('a', 'y'), queue.submit('b', 'z')];
    await tick();
    expect(batches).toEqual([
      ['a', 'x', 'y'],
      ['b', 'z'],
    ]);
    const later = [queue.submit('a', 'p'), queue.submit('a', 'q')];
    await tick();
    expect(batches).toHaveLength(2); // a's next batch waits for the running one
    gates.splice(0).forEach((open) => open());
    expect(await Promise.all(first)).toEqual(['X', 'Y', 'Z']);
    await tick();
    expect(batches[2]).toEqual(['a', 'p', 'q']);
    gates.splice(0).forEach((open) => open());
    expect(await Promise.all(later)).toEqual(['P', 'Q']);
    expect(maxRunning).toBe(2); // one per key
    expect(queue.activeKeys).toBe(0);
  });

  it('should hand each item its own outcome, cap the batch size, and fail a whole batch only if it throws', async () => {
    const sizes: number[] = [];
    const queue = new GroupCommitQueue<number, number>(async (_key, items) => {
      sizes.push(items.length);
      if (items.includes(99)) throw new Error('batch broke');
      return items.map((item): ItemOutcome<number> =>
        item < 0 ? { ok: false, error: new Error(`bad ${item}`) } : { ok: true, value: item * 2 },
      );
    }, 3);
    const results = await Promise.allSettled([1, -2, 3, 4, 5].map((item) => queue.submit('k', item)));
    expect(sizes).toEqual([3, 2]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([
      2,
      'bad -2',
      6,
      8,
      10,
    ]);
    await expect(queue.submit('k', 99)).rejects.toThrow('batch broke');
    await expect(queue.submit('k', 7)).resolves.toBe(14);
  });
});
