import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.ts';
import type { ProviderConfig } from '../../src/operator-config/schema.ts';
import { ChatGateway, type UpstreamMetrics } from '../../src/providers/chat/chat-gateway.ts';
import type { UpstreamChatChunk } from '../../src/providers/chat/chat-engine.ts';
import { startOpenAIUpstream, type OpenAIUpstream } from '../helpers/openai-upstream.ts';

const body = { messages: [{ role: 'user', content: 'Hello' }] };
const both = [
  { providerId: 'a', upstreamModel: 'model-on-a' },
  { providerId: 'b', upstreamModel: 'model-on-b' },
];

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

let a: OpenAIUpstream;
let b: OpenAIUpstream;
let clock = 1_000_000;
const gateways: ChatGateway[] = [];
const observed: { provider: string; operation: string; outcome: string }[] = [];
const metrics: UpstreamMetrics = {
  observeUpstream: (provider, operation, outcome) => void observed.push({ provider, operation, outcome }),
};

function gateway(overrides: Partial<ProviderConfig> = {}, extra: ProviderConfig[] = []): ChatGateway {
  const provider = (id: string, url: string): ProviderConfig => ({
    id,
    type: 'openai-compatible',
    baseUrl: url,
    timeoutMs: 300,
    maxRetries: 1,
    cooldownMs: 60_000,
    ...overrides,
  });
  const created = new ChatGateway({
    providers: [provider('a', a.url), provider('b', b.url), ...extra],
    metrics,
    now: () => clock,
  });
  gateways.push(created);
  return created;
}

beforeAll(async () => {
  [a, b] = await Promise.all([startOpenAIUpstream(), startOpenAIUpstream()]);
  b.setBehavior({ kind: 'reply', content: 'from b' });
});
afterEach(() => {
  a.setBehavior({ kind: 'reply' });
  b.setBehavior({ kind: 'reply', content: 'from b' });
  a.requests.length = 0;
  b.requests.length = 0;
  observed.length = 0;
});
afterAll(async () => {
  await Promise.all(gateways.map((g) => g.close()));
  await Promise.all([a.close(), b.close()]);
});

describe('ChatGateway', () => {
  it('serves from the first binding with its upstream model name', async () => {
    const result = await gateway().complete(both, body, {});
    expect(result).toMatchObject({ providerId: 'a', upstreamModel: 'model-on-a' });
    expect(result.completion.choices[0]?.message.content).toBe('Hello from the test upstream.');
    expect(a.chatRequests()[0]?.body.model).toBe('model-on-a');
    expect(observed).toEqual([{ provider: 'a', operation: 'chat', outcome: 'ok' }]);
  });

  it('retries the same provider once on a 5xx before the first byte', async () => {
    a.queue({ kind: 'status', status: 503 });
    const result = await gateway().complete(both, body, {});
    expect(result.providerId).toBe('a');
    expect(a.chatRequests()).toHaveLength(2);
    expect(b.chatRequests()).toHaveLength(0);
  });

  it('falls back to the next binding after the retries, and honours maxRetries', async () => {
    a.setBehavior({ kind: 'status', status: 500 });
    const result = await gateway().complete(both, body, {});
    expect(result).toMatchObject({ providerId: 'b', upstreamModel: 'model-on-b' });
    expect(result.completion.choices[0]?.message.content).toBe('from b');
    expect(a.chatRequests()).toHaveLength(2);
    a.requests.length = 0;
    await gateway({ maxRetries: 0 }).complete(both, body, {});
    expect(a.chatRequests()).toHaveLength(1);
  });

  it('retries a timeout and a reset, then falls back', async () => {
    a.queue({ kind: 'delay', ms: 3_000 }, { kind: 'reset' });
    const result = await gateway().complete(both, body, {});
    expect(result.providerId).toBe('b');
    expect(a.chatRequests()).toHaveLength(2);
    expect(observed.map((o) => o.outcome)).toEqual(['timeout', 'error', 'ok']);
  });

  it('never retries nor falls back on the caller’s own mistake (4xx → ValidationError)', async () => {
    a.setBehavior({ kind: 'status', status: 400, message: 'max_tokens is too large' });
    const error = await failure(gateway().complete(both, body, {}));
    expect(error).toBeInstanceOf(ValidationError);
    expect(a.chatRequests()).toHaveLength(1);
    expect(b.chatRequests()).toHaveLength(0);
  });

  it('an upstream auth failure (operator key) moves on without retrying', async () => {
    a.setBehavior({ kind: 'status', status: 401 });
    const result = await gateway().complete(both, body, {});
    expect(result.providerId).toBe('b');
    expect(a.chatRequests()).toHaveLength(1);
  });

  it('throws the last upstream error when every binding fails', async () => {
    a.setBehavior({ kind: 'status', status: 500 });
    b.setBehavior({ kind: 'delay', ms: 3_000 });
    const error = await failure(gateway().complete(both, body, {}));
    expect(error).toMatchObject({ code: 'REQUEST_TIMEOUT' });
  });

  it('skips a provider that failed 3 times in a row for its cooldown, unless all are cooling', async () => {
    const chat = gateway({ maxRetries: 0 });
    a.setBehavior({ kind: 'status', status: 500 });
    for (let i = 0; i < 3; i += 1) expect((await chat.complete(both, body, {})).providerId).toBe('b');
    expect(a.chatRequests()).toHaveLength(3);
    // Cooling down: the next calls go straight to b.
    await chat.complete(both, body, {});
    expect(a.chatRequests()).toHaveLength(3);
    // A model served only by the cooling provider still tries it.
    expect(await failure(chat.complete([both[0]!], body, {}))).toMatchObject({ code: 'UPSTREAM_ERROR' });
    expect(a.chatRequests()).toHaveLength(4);
    // After the cooldown, a is tried first again and a success clears its record.
    clock += 60_001;
    a.setBehavior({ kind: 'reply' });
    expect((await chat.complete(both, body, {})).providerId).toBe('a');
  });

  it("the caller's abort stops everything at once: no retry, no fallback", async () => {
    a.setBehavior({ kind: 'delay', ms: 5_000 });
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 50);
    const error = await failure(gateway({ timeoutMs: 10_000 }).complete(both, body, { signal: controller.signal }));
    expect(error).toMatchObject({ cancelled: true, code: 'UPSTREAM_ERROR' });
    expect(Date.now() - started).toBeLessThan(5_000); // before the upstream's answer was due
    expect(a.chatRequests()).toHaveLength(1);
    expect(b.chatRequests()).toHaveLength(0);
    await a.waitForClientAbort();
  });

  it('an unknown provider → 503 naming nothing; known bindings still serve', async () => {
    const chat = gateway();
    const error = await failure(chat.complete([{ providerId: 'gone', upstreamModel: 'secret-model' }], body, {}));
    expect(error).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect((error as Error).message).not.toMatch(/gone|secret/);
    expect((await chat.complete([{ providerId: 'gone', upstreamModel: 'x' }, both[1]!], body, {})).providerId).toBe(
      'b',
    );
    expect(chat.has('a')).toBe(true);
    expect(chat.has('gone')).toBe(false);
  });

  it('streams: falls back when the stream fails before its first chunk', async () => {
    a.setBehavior({ kind: 'malformed' });
    const { providerId, stream } = await gateway({ maxRetries: 0 }).stream(both, body, {});
    expect(providerId).toBe('b');
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('from b');
  });

  it('streams: never retries once output started; the break reaches the reader', async () => {
    a.setBehavior({ kind: 'reply', pauseAfterChunks: 2, pauseMs: 30, breakAfterChunks: 2 });
    const { providerId, stream } = await gateway().stream(both, body, {});
    expect(providerId).toBe('a');
    const chunks: UpstreamChatChunk[] = [];
    const error = await failure(
      (async () => {
        for await (const chunk of stream) chunks.push(chunk);
      })(),
    );
    expect(error).toMatchObject({ code: 'UPSTREAM_ERROR' });
    expect(chunks.length).toBeGreaterThan(0);
    expect(a.chatRequests()).toHaveLength(1);
    expect(b.chatRequests()).toHaveLength(0);
    expect(observed.at(-1)).toEqual({ provider: 'a', operation: 'chat_stream', outcome: 'broken' });
  });

  it('serves the simulator provider', async () => {
    const chat = gateway({}, [{ id: 'sim', type: 'simulator', options: { chunkDelayMs: 0 } }]);
    const { completion } = await chat.complete([{ providerId: 'sim', upstreamModel: 'lagoon-sim-chat' }], body, {});
    expect(completion.choices[0]?.message.content).toBeTruthy();
  });

  it('refuses invalid adapter options with the provider named', () => {
    expect(() => gateway({}, [{ id: 'sim2', type: 'simulator', options: { chunkDelay: 3 } }])).toThrow(
      /provider "sim2".*chunkDelay/,
    );
  });
});
