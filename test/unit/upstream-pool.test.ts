import { describe, expect, it } from 'vitest';
import { UpstreamError, ValidationError } from '../../src/errors.ts';
import { withEnvProviders } from '../../src/operator-config/env-providers.ts';
import { Backoff } from '../../src/providers/backoff.ts';
import { EmbeddingGateway } from '../../src/providers/embeddings/embedding-gateway.ts';
import { brokenError } from '../../src/providers/upstream-errors.ts';
import { UpstreamPool, type UpstreamMetrics } from '../../src/providers/upstream-pool.ts';

/* The upstream pool every gateway uses: its retry schedule, order and abort rule, on a fake clock and fake dice. */

interface FakeEngine {
  readonly id: string;
  readonly answers: (() => string)[];
}

const fail = () => {
  throw brokenError('failed');
};

function setup(options: { random?: () => number; maxRetries?: number } = {}) {
  const pauses: number[] = [];
  const observed: string[] = [];
  const metrics: UpstreamMetrics = {
    observeUpstream: (provider, operation, outcome) => void observed.push(`${provider} ${operation} ${outcome}`),
  };
  let clock = 1_000;
  const pool = new UpstreamPool<FakeEngine>({
    label: 'test engine',
    unavailable: 'No test engine is available',
    metrics,
    now: () => clock,
    backoff: new Backoff({
      random: options.random ?? (() => 0.5),
      sleep: async (ms) => {
        pauses.push(ms);
        return true;
      },
    }),
  });
  const engine = (id: string, ...answers: (() => string)[]): FakeEngine => {
    const made = { id, answers };
    pool.add({ engine: made, maxRetries: options.maxRetries ?? 1, cooldownMs: 60_000 });
    return made;
  };
  const call = (signal?: AbortSignal, ids = ['a', 'b']) =>
    pool.run(
      ids.map((providerId) => ({ providerId, upstreamModel: `${providerId}-model` })),
      { operation: 'test', signal },
      (candidate) => (candidate.answers.shift() ?? (() => 'ok'))(),
    );
  return { pool, pauses, observed, engine, call, tick: (ms: number) => (clock += ms) };
}

describe('Backoff', () => {
  it('doubles the pause from 100 ms up to 2 s, each drawn between half and one and a half of it', () => {
    const middle = new Backoff({ random: () => 0.5 });
    expect([0, 1, 2, 3, 4, 5, 6].map((retry) => middle.delayMs(retry))).toEqual([100, 200, 400, 800, 1600, 2000, 2000]);
    expect([0, 1, 2].map((retry) => new Backoff({ random: () => 0 }).delayMs(retry))).toEqual([50, 100, 200]);
    expect([0, 1, 2].map((retry) => new Backoff({ random: () => 0.999 }).delayMs(retry))).toEqual([150, 300, 600]);
  });

  it('does not sleep for a caller that already left', async () => {
    const slept: number[] = [];
    const backoff = new Backoff({ sleep: async (ms) => (slept.push(ms), true) });
    expect(await backoff.pause(0, AbortSignal.abort())).toBe(false);
    expect(slept).toEqual([]);
  });
});

describe('UpstreamPool', () => {
  it('retries a retryable failure after the backoff schedule, then falls back, counting every attempt', async () => {
    const { engine, call, pauses, observed } = setup({ random: () => 0, maxRetries: 3 });
    engine('a', fail, fail, fail, fail);
    engine('b');
    const answer = await call();
    expect(answer).toMatchObject({ providerId: 'b', upstreamModel: 'b-model', result: 'ok' });
    expect(pauses).toEqual([50, 100, 200]);
    expect(observed).toEqual(['a test error', 'a test error', 'a test error', 'a test error', 'b test ok']);
  });

  it('skips a provider that failed three calls in a row for its cooldown, unless all are cooling', async () => {
    const { engine, call, tick } = setup({ maxRetries: 0 });
    const a = engine('a', fail, fail, fail);
    engine('b');
    for (let i = 0; i < 3; i += 1) expect((await call()).providerId).toBe('b');
    a.answers.push(() => 'from a');
    expect((await call()).providerId).toBe('b');
    expect((await call(undefined, ['a'])).result).toBe('from a');
    tick(60_001);
    a.answers.push(() => 'from a again');
    expect((await call()).result).toBe('from a again');
  });

  it('ends at once on a caller mistake, and on the caller abort during the pause', async () => {
    const { engine, call } = setup();
    engine('a', () => {
      throw new ValidationError('bad input');
    });
    engine('b');
    await expect(call()).rejects.toBeInstanceOf(ValidationError);

    const controller = new AbortController();
    const aborting = setup();
    aborting.engine('a', () => {
      controller.abort();
      return fail();
    });
    aborting.engine('b');
    await expect(aborting.call(controller.signal)).rejects.toMatchObject({ cancelled: true });
    expect(aborting.pauses).toEqual([]);
    expect(aborting.observed).toEqual(['a test cancelled']);
  });

  it('answers 503 naming no provider when no binding has an engine, and the eligibility error when none can', async () => {
    const { pool, engine, call } = setup();
    engine('a');
    await expect(call(undefined, ['gone'])).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    const none = pool.run(
      [{ providerId: 'a', upstreamModel: 'm' }],
      { operation: 'test', eligible: () => false, ineligible: () => new UpstreamError('cannot', 'MODEL_OFFLINE') },
      () => 'never',
    );
    await expect(none).rejects.toMatchObject({ code: 'MODEL_OFFLINE' });
  });
});

describe('every gateway on the pool', () => {
  it('counts embedding calls in the upstream metrics', async () => {
    const observed: string[] = [];
    const gateway = new EmbeddingGateway([{ id: 'sim', type: 'simulator' }], undefined, {
      observeUpstream: (provider, operation, outcome) => void observed.push(`${provider} ${operation} ${outcome}`),
    });
    await gateway.embed([{ providerId: 'sim', upstreamModel: 'x' }], { inputs: ['hello'], preferred: 'float' }, {});
    expect(observed).toEqual(['sim embeddings ok']);
    await gateway.close();
  });
});

describe(withEnvProviders.name, () => {
  it('adds the env shortcuts as providers once, a file provider of the same id winning', () => {
    const warnings: string[] = [];
    const env = {
      chatUpstream: { baseUrl: 'http://llm.local/v1', apiKey: 'k' },
      search: { searxngUrl: 'http://searx.local', braveApiKey: undefined, braveUrl: undefined },
    };
    const merged = withEnvProviders({ providers: [{ id: 'simulator', type: 'simulator' as const }] }, env);
    expect(merged.providers.map((provider) => `${provider.id}:${provider.type}`)).toEqual([
      'simulator:simulator',
      'openai-compatible:openai-compatible',
      'env:searxng:searxng',
    ]);
    const file = { providers: [{ id: 'openai-compatible', type: 'simulator' as const }] };
    const kept = withEnvProviders(file, { chatUpstream: env.chatUpstream }, (message) => warnings.push(message));
    expect(kept).toBe(file);
    expect(warnings).toHaveLength(1);
  });
});
