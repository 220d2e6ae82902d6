import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AccountAuthContext } from '../../src/auth/auth-context.ts';
import type { LeaseCall } from '../../src/billing/billing-ops.ts';
import { BillingService } from '../../src/billing/billing.service.ts';
import type { Price, Reservation, SettledCharge, Usage } from '../../src/billing/billing.types.ts';
import type { Holds } from '../../src/billing/holds.ts';
import { parseNano } from '../../src/billing/money.ts';
import { PaidCall } from '../../src/billing/paid-call.ts';
import type { Database } from '../../src/db/database.ts';
import { InsufficientBalanceError } from '../../src/errors.ts';
import { createLogger } from '../../src/logger.ts';

/*
 * The paid-call handle over stand-in holds that record every step: whichever way the work ends, the hold is
 * settled or released exactly once.
 */

const MAX: Price = { usd: parseNano('0.01'), diem: parseNano('0.01') };
const TTL_MS = 1_000;
const auth: AccountAuthContext = {
  kind: 'apiKey',
  requestId: 'req-1',
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
const usage: Usage = {
  modelId: 'm',
  lines: [{ sku: 'sku', units: '1', pricePerUnitUsd: '0.002', cost: { usd: parseNano('0.002'), diem: 0n } }],
};

/** Holds that record what was asked of them; `fail` makes one step throw. */
function recordingHolds(fail: { settle?: boolean; release?: boolean; reserve?: boolean } = {}) {
  const steps: string[] = [];
  const reservation: Reservation = {
    id: 'res-1',
    accountId: auth.accountId,
    apiKeyId: 'key-1',
    currency: 'USD',
    amount: MAX.usd,
    keyPeriodStart: null,
    requestId: auth.requestId,
  };
  const holds: Pick<Holds, 'reserve' | 'settle' | 'release' | 'extend'> = {
    reserve: async () => {
      steps.push('reserve');
      if (fail.reserve) throw new InsufficientBalanceError();
      return reservation;
    },
    settle: async (_held: Reservation, call: LeaseCall): Promise<SettledCharge> => {
      steps.push('settle');
      if (fail.settle) throw new Error('the database went away');
      return {
        reservationId: reservation.id,
        currency: 'USD',
        charged: call.charged,
        balanceAfter: 0n,
        usageEntryIds: [],
        alreadySettled: false,
      };
    },
    release: async () => {
      steps.push('release');
      if (fail.release) throw new Error('the database went away');
      return true;
    },
    extend: async () => {
      steps.push('extend');
      return true;
    },
  };
  const logger = createLogger('silent');
  const billing = new BillingService({
    db: {} as Database,
    logger,
    holds: holds as Holds,
    options: { reservationTimeoutMs: TTL_MS },
  });
  return { billing, steps, logger };
}

afterEach(() => {
  vi.useRealTimers();
});

describe(`${BillingService.name}.paidCall`, () => {
  it('should release the hold when the work throws, and throw its error', async () => {
    const { billing, steps } = recordingHolds();
    const failure = new Error('upstream failed');
    await expect(
      billing.paidCall(auth, MAX, async () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(steps).toEqual(['reserve', 'release']);
  });

  it('should release the hold when the caller goes away mid-call', async () => {
    const { billing, steps } = recordingHolds();
    const controller = new AbortController();
    let started = false;
    const running = billing.paidCall(
      auth,
      MAX,
      (call) =>
        new Promise<void>((_resolve, reject) => {
          started = call.open;
          controller.signal.addEventListener('abort', () => reject(controller.signal.reason as Error));
        }),
    );
    await vi.waitFor(() => expect(started).toBe(true));
    expect(steps).toEqual(['reserve']);
    controller.abort(new Error('client gone'));
    await expect(running).rejects.toThrow('client gone');
    expect(steps).toEqual(['reserve', 'release']);
  });

  it('should release the hold of work that ends without settling', async () => {
    const { billing, steps } = recordingHolds();
    expect(await billing.paidCall(auth, MAX, async () => 'nothing delivered')).toBe('nothing delivered');
    expect(steps).toEqual(['reserve', 'release']);
  });

  it('should settle once and release nothing after a settlement', async () => {
    const { billing, steps } = recordingHolds();
    const charge = await billing.paidCall(auth, MAX, (call) => call.settle(usage));
    expect(charge.charged).toBe(parseNano('0.002'));
    expect(steps).toEqual(['reserve', 'settle']);
  });

  it('should refuse a second settlement, charging once', async () => {
    const { billing, steps } = recordingHolds();
    await expect(
      billing.paidCall(auth, MAX, async (call) => {
        await call.settle(usage);
        await call.settle(usage);
      }),
    ).rejects.toThrow(/already settled/);
    expect(steps).toEqual(['reserve', 'settle']);
  });

  it('should refuse to settle a released call', async () => {
    const { billing, steps } = recordingHolds();
    await expect(
      billing.paidCall(auth, MAX, async (call) => {
        await call.release();
        await call.settle(usage);
      }),
    ).rejects.toThrow(/already released/);
    expect(steps).toEqual(['reserve', 'release']);
  });

  it('should release the hold when the settlement fails, and throw its error', async () => {
    const { billing, steps } = recordingHolds({ settle: true });
    await expect(billing.paidCall(auth, MAX, (call) => call.settle(usage))).rejects.toThrow('the database went away');
    expect(steps).toEqual(['reserve', 'settle', 'release']);
  });

  it('should not run the work when nothing is held (402)', async () => {
    const { billing, steps } = recordingHolds({ reserve: true });
    const work = vi.fn(async () => undefined);
    await expect(billing.paidCall(auth, MAX, work)).rejects.toBeInstanceOf(InsufficientBalanceError);
    expect(work).not.toHaveBeenCalled();
    expect(steps).toEqual(['reserve']);
  });

  it('should leave a handed-off call open for its new owner, who ends it once', async () => {
    const { billing, steps } = recordingHolds();
    const call = await billing.paidCall(auth, MAX, async (paid) => paid.handOff());
    expect(steps).toEqual(['reserve']);
    expect(call.open).toBe(true);
    await call.release();
    await call.release();
    expect(steps).toEqual(['reserve', 'release']);
  });

  it('should log a failed release rather than replace the work’s own error', async () => {
    const { billing, steps, logger } = recordingHolds({ release: true });
    const logged = vi.spyOn(logger, 'error');
    const failure = new Error('upstream failed');
    await expect(
      billing.paidCall(auth, MAX, async () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(steps).toEqual(['reserve', 'release']);
    expect(logged).toHaveBeenCalledOnce();
  });
});

describe(`${PaidCall.name}.keepAlive`, () => {
  it('should extend the hold every quarter of its time until the call is settled', async () => {
    vi.useFakeTimers();
    const { billing, steps } = recordingHolds();
    await billing.paidCall(auth, MAX, async (call) => {
      call.keepAlive();
      await vi.advanceTimersByTimeAsync(TTL_MS);
      expect(steps.filter((step) => step === 'extend')).toHaveLength(4);
      await call.settle(usage);
      await vi.advanceTimersByTimeAsync(TTL_MS);
    });
    expect(steps.filter((step) => step === 'extend')).toHaveLength(4);
  });

  it('should stop extending once the call is released, whichever way it ended', async () => {
    vi.useFakeTimers();
    const { billing, steps } = recordingHolds();
    await expect(
      billing.paidCall(auth, MAX, async (call) => {
        call.keepAlive();
        await vi.advanceTimersByTimeAsync(TTL_MS / 2);
        throw new Error('broke off');
      }),
    ).rejects.toThrow('broke off');
    await vi.advanceTimersByTimeAsync(TTL_MS * 2);
    expect(steps).toEqual(['reserve', 'extend', 'extend', 'release']);
  });
});
