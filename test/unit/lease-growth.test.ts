import { describe, expect, it } from 'vitest';
import type { AccountAuthContext } from '../../src/auth/auth-context.ts';
import type { BillingOp, OpOutcome } from '../../src/billing/billing-batch.ts';
import type { Price } from '../../src/billing/billing.types.ts';
import { GroupCommitQueue } from '../../src/billing/group-commit.ts';
import type { LeaseUpdateRequest } from '../../src/billing/batch-writer.ts';
import { LeasedHolds, NO_LEASE_PEERS } from '../../src/billing/leased-holds.ts';
import { DEFAULT_LEASE_OPTIONS } from '../../src/billing/lease-options.ts';
import { parseNano } from '../../src/billing/money.ts';
import { createLogger } from '../../src/logger.ts';

/*
 * The leased holds over a stand-in database whose batches end only when the test says so, behind the real
 * group-commit queue (which takes the next batch's updates as soon as one ends, before any caller resumes). This
 * makes the order of updates and arrivals exact, whatever the machine's speed.
 */

const CALL: Price = { usd: parseNano('0.01'), diem: parseNano('0.01') };
const auth: AccountAuthContext = {
  kind: 'apiKey',
  requestId: 'req',
  accountId: 'account-1',
  apiKey: {
    id: 'key-1',
    accountId: 'account-1',
    type: 'INFERENCE',
    limitPeriod: 'LIFETIME',
    modelPrivacy: 'ALL',
    limits: { usd: null, diem: null },
    expiresAt: null,
  },
};

/** `room`: what the account can still lend (leases opened and growth granted come out of it). */
function gatedLeases(room = parseNano('1000')) {
  const held = new Map<string, bigint>();
  const gates: (() => void)[] = [];
  const outcomeOf = (op: BillingOp): OpOutcome => {
    if (op.kind === 'reserve') {
      if (room < op.maxCost.usd) return { kind: 'refused', blockedBy: undefined };
      const wanted = op.lease?.target.usd ?? op.maxCost.usd;
      const amount = wanted < room ? wanted : room;
      room -= amount;
      const reservation = {
        id: `lease-${held.size + 1}`,
        accountId: op.accountId,
        apiKeyId: op.apiKeyId,
        currency: 'USD' as const,
        amount,
        keyPeriodStart: op.keyPeriodStart,
        requestId: op.requestId,
      };
      held.set(reservation.id, amount);
      return { kind: 'reserved', reservation, balanceAfter: parseNano('1000') };
    }
    if (op.kind !== 'lease') throw new Error(`unexpected ${op.kind}`);
    const before = held.get(op.lease.id) ?? 0n;
    const grown = op.grow && room >= op.grow.min ? (op.grow.target < room ? op.grow.target : room) : 0n;
    const amount = op.finish ? 0n : grown > 0n ? before + grown : before - op.release;
    room += before - amount;
    held.set(op.lease.id, amount);
    return { kind: 'lease', amount, grown, balanceAfter: parseNano('1000'), balancesAfterCalls: [] };
  };
  const queue = new GroupCommitQueue<BillingOp | LeaseUpdateRequest, OpOutcome>(async (_key, items) => {
    const ops = items.map((item) => (item.kind === 'lease-update' ? item.take() : item));
    await new Promise<void>((resolve) => gates.push(resolve));
    const outcomes = ops.map((op) => ({ ok: true as const, value: outcomeOf(op) }));
    items.forEach((item, index) => item.kind === 'lease-update' && item.finished(outcomes[index]!));
    return outcomes;
  });
  const leases = new LeasedHolds({
    writer: {
      submit: (_accountId, op) => queue.submit('lane', op),
      chargeUnheld: async () => {
        throw new Error('no direct charges here');
      },
    },
    peers: NO_LEASE_PEERS,
    logger: createLogger('silent'),
    holder: 'test',
    options: { ...DEFAULT_LEASE_OPTIONS, callsPerLease: 1 },
  });
  /** Ends the batch in flight and lets every caller it wakes run. */
  const endBatch = async () => {
    await new Promise((resolve) => setImmediate(resolve));
    gates.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
  };
  /** Calls that draw, and how each ended so far ('waiting', 'drawn' or the error's code). */
  const outcomes: string[] = [];
  const arrive = () => {
    const index = outcomes.push('waiting') - 1;
    leases.reserve(auth, CALL, 60_000).then(
      () => (outcomes[index] = 'drawn'),
      (error: { code?: string }) => (outcomes[index] = error.code ?? 'failed'),
    );
  };
  const close = async () => {
    let closed = false;
    void leases.close().then(() => (closed = true));
    for (let update = 0; update < 200 && !closed; update += 1) await endBatch();
  };
  return { leases, endBatch, outcomes, arrive, close };
}

describe('Balance lease growth', () => {
  it('should serve a call that waited for a growth from it, even when the next growth is in flight before it resumes', async () => {
    const { leases, endBatch, outcomes, arrive, close } = gatedLeases();
    try {
      const first = leases.reserve(auth, CALL, 60_000);
      await endBatch(); // the lease opens, one call's worth: the first call takes all of it (and asks to grow)
      await expect(first).resolves.toMatchObject({ amount: CALL.usd });
      // A burst the lease cannot cover: these wait for an urgent growth, taken when the growth in flight ends and
      // so setting its free rest aside; then a call arrives during every update and finds that rest set aside too.
      for (let index = 0; index < 3; index += 1) arrive();
      for (let update = 0; update < 40; update += 1) {
        await endBatch();
        arrive();
      }
      for (let update = 0; update < 100; update += 1) await endBatch();
      // Every call served, none refused for funds on an account that always had them.
      expect(outcomes).toEqual(Array(43).fill('drawn'));
    } finally {
      await close();
    }
  });

  it('should serve waiting calls up to what the account can lend and refuse the rest at once', async () => {
    const { endBatch, outcomes, arrive, close } = gatedLeases(CALL.usd * 5n);
    try {
      for (let index = 0; index < 11; index += 1) arrive();
      for (let update = 0; update < 30 && outcomes.includes('waiting'); update += 1) await endBatch();
      expect(outcomes.filter((outcome) => outcome === 'drawn')).toHaveLength(5);
      expect(outcomes.filter((outcome) => outcome !== 'drawn')).toEqual(Array(6).fill('INSUFFICIENT_BALANCE'));
    } finally {
      await close();
    }
  });
});
