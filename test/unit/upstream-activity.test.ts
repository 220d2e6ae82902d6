import { describe, expect, it } from 'vitest';
import { Backoff } from '../../src/providers/backoff.ts';
import { brokenError } from '../../src/providers/upstream-errors.ts';
import { UpstreamActivity } from '../../src/providers/upstream-activity.ts';
import { UpstreamPool, type UpstreamMetrics } from '../../src/providers/upstream-pool.ts';

/* What the operator's upstream health view reads: each pool's attempts, errors and cooldowns, per provider. */

describe('UpstreamActivity', () => {
  it('records latency, errors and the cooldown a pool starts and ends, and forwards to the metrics', async () => {
    let clock = 1_000_000;
    const forwarded: string[] = [];
    const inner: UpstreamMetrics = { observeUpstream: (p, o, outcome) => void forwarded.push(`${p} ${o} ${outcome}`) };
    const activity = new UpstreamActivity(inner, () => clock);
    activity.known(['flaky', 'idle']);
    const pool = new UpstreamPool<{ id: string }>({
      label: 'test engine',
      unavailable: 'none',
      metrics: activity,
      now: () => clock,
      backoff: new Backoff({ random: () => 0.5, sleep: async () => true }),
    });
    pool.add({ engine: { id: 'flaky' }, maxRetries: 0, cooldownMs: 30_000 });
    const bindings = [{ providerId: 'flaky', upstreamModel: 'm' }];
    let failing = true;
    const call = () =>
      pool.run(bindings, { operation: 'chat' }, () => {
        if (failing) throw brokenError('upstream said no');
        return 'ok';
      });
    for (let i = 0; i < 3; i += 1) await expect(call()).rejects.toThrow();

    const cooling = activity.snapshot().find((h) => h.providerId === 'flaky');
    expect(cooling).toMatchObject({ calls: 3, failures: 3, recentLatencyMs: null });
    expect(cooling?.coolingDownUntil?.getTime()).toBe(clock + 30_000);
    expect(cooling?.recentErrors).toHaveLength(3);
    expect(cooling?.recentErrors[0]?.message).toContain('upstream said no');
    expect(activity.snapshot().find((h) => h.providerId === 'idle')).toMatchObject({
      calls: 0,
      coolingDownUntil: null,
    });

    // Every provider of the model is cooling down, so the pool still tries it; a success ends the cooldown.
    failing = false;
    clock += 1_000;
    await expect(call()).resolves.toMatchObject({ result: 'ok' });
    const healthy = activity.snapshot().find((h) => h.providerId === 'flaky');
    expect(healthy?.coolingDownUntil).toBeNull();
    expect(healthy?.recentLatencyMs).not.toBeNull();
    expect(forwarded).toEqual(['flaky chat error', 'flaky chat error', 'flaky chat error', 'flaky chat ok']);
  });
});
