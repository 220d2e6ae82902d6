import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator } from '../../src/auth/auth-context.ts';
import { jobInternals } from '../../src/media/jobs/job.wiring.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { startOpenAIUpstream, type OpenAIUpstream } from '../helpers/openai-upstream.ts';
import { writeOperatorConfig } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { freePort } from '../helpers/free-port.ts';
import { scrape, type Scrape } from '../helpers/prometheus.ts';
import { createAccountWithKey } from '../helpers/services.ts';
import { scaled } from '../helpers/time-scale.ts';
import { toneSample } from '../helpers/audio.ts';
import { startJsonRpcStub } from '../helpers/json-rpc-stub.ts';
import { startSearxng, type FakeUpstream } from '../helpers/search-upstreams.ts';

/*
 * The operators' metrics (docs/operations.md, Metrics), read from /metrics after paid calls made over the REST API:
 * each call moves exactly the series it should — tokens, units, spend, paid calls by model and provider; refusals by
 * code; upstream errors, fallbacks and cooldowns; the job queue, its wait and run time; holds open back to zero.
 */

const CHAT = 'lagoon-sim-chat';
const SIM = 'simulator';

interface ChatAnswer {
  usage: { prompt_tokens: number; completion_tokens: number };
}

describe(`GET /metrics after paid calls, simulator engines (${testDatabaseKind})`, () => {
  let t: TestApp;
  let secret: string;
  let accountId: string;
  let searxng: FakeUpstream;
  let node: Awaited<ReturnType<typeof startJsonRpcStub>>;
  const metrics = () => scrape(() => t.call('/metrics', { key: null }));
  const chat = (body: Record<string, unknown>, key = secret) =>
    t.call('/api/v1/chat/completions', {
      body: { model: CHAT, messages: [{ role: 'user', content: 'Hi' }], ...body },
      key,
    });
  const usd = async () => (await t.app.services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD')!;

  beforeAll(async () => {
    [searxng, node] = await Promise.all([startSearxng(), startJsonRpcStub()]);
    t = await createTestApp({
      LAGOON_JOB_WORKERS: 'false',
      SEARXNG_URL: searxng.url,
      RPC_UPSTREAM_ETHEREUM_SEPOLIA: node.url,
    });
    ({ secret, accountId } = await createAccountWithKey(t.app.services, {
      credit: { USD: '5' },
      type: 'INFERENCE',
    }));
  }, scaled(120_000));
  afterAll(async () => {
    await t?.close();
    await Promise.all([searxng?.close(), node?.close()]);
  }, scaled(60_000));

  it('counts a chat completion: tokens in and out, units, spend in USD and the call, by model and provider', async () => {
    const before = await metrics();
    const balance = (await usd()).amount;
    const response = await chat({ max_tokens: 40 });
    expect(response.status).toBe(200);
    const { usage } = (await response.json()) as ChatAnswer;
    await t.app.services.billing.flush(accountId);
    const spentNano = balance - (await usd()).amount;
    expect(spentNano).toBeGreaterThan(0n);
    const after = await metrics();
    const labels = { model: CHAT, provider: SIM };
    const moved = (name: string, more: Record<string, string> = {}) =>
      after.value(name, { ...labels, ...more }) - before.value(name, { ...labels, ...more });
    expect(moved('lagoon_tokens_total', { direction: 'in' })).toBe(usage.prompt_tokens);
    expect(moved('lagoon_tokens_total', { direction: 'out' })).toBe(usage.completion_tokens);
    expect(moved('lagoon_usage_units_total')).toBe(usage.prompt_tokens + usage.completion_tokens);
    expect(moved('lagoon_paid_calls_total')).toBe(1);
    // The spend is the balance's change, nano-USD exactly, as a float only at export.
    expect(moved('lagoon_spend_usd_total')).toBeCloseTo(Number(spentNano) / 1e9, 9);
    const route = { method: 'POST', route: '/api/v1/chat/completions', status: '200' };
    expect(after.value('lagoon_http_requests_total', route) - before.value('lagoon_http_requests_total', route)).toBe(
      1,
    );
    expect(after.text).not.toContain('route="POST ');
    expect(after.value('lagoon_holds_open')).toBe(0);
  });

  it('times the first byte of a streamed completion by provider', async () => {
    const labels = { provider: SIM, operation: 'chat_stream' };
    const before = await metrics();
    const response = await chat({ stream: true, max_tokens: 20 });
    expect(response.status).toBe(200);
    await response.text();
    const after = await metrics();
    const firstBytes = (s: Scrape) => s.value('lagoon_upstream_time_to_first_byte_seconds_count', labels);
    expect(firstBytes(after) - firstBytes(before)).toBe(1);
    expect(
      after.value('lagoon_paid_calls_total', { model: CHAT }) -
        before.value('lagoon_paid_calls_total', { model: CHAT }),
    ).toBe(1);
  });

  it('counts refusals by code: a balance too low, then a key over its rate limit; neither holds anything', async () => {
    const broke = await createAccountWithKey(t.app.services, { type: 'INFERENCE' });
    const limited = await createAccountWithKey(t.app.services, { credit: { USD: '1' }, type: 'INFERENCE' });
    await t.app.services.apiKeys.setRateLimits(operator(), { id: limited.keyId }, { rpm: 1 });
    const before = await metrics();
    expect((await chat({}, broke.secret)).status).toBe(402);
    const answers = [await chat({}, limited.secret), await chat({}, limited.secret)];
    expect(answers.map((a) => a.status)).toEqual([200, 429]);
    const after = await metrics();
    const refused = (code: string) =>
      after.value('lagoon_refusals_total', { code }) - before.value('lagoon_refusals_total', { code });
    expect(refused('INSUFFICIENT_BALANCE')).toBe(1);
    expect(refused('RATE_LIMIT_EXCEEDED')).toBe(1);
    expect(after.value('lagoon_holds_open')).toBe(0);
  });

  it('counts pictures, speech and embeddings by the provider that answered', async () => {
    const calls = [
      {
        path: '/api/v1/image/generate',
        body: { model: 'lagoon-sim-image', prompt: 'a heron', width: 256, height: 256 },
      },
      { path: '/api/v1/audio/speech', body: { model: 'lagoon-sim-speech', input: 'Hello from the lagoon.' } },
      { path: '/api/v1/embeddings', body: { model: 'lagoon-sim-embedding', input: 'tide pools' } },
    ];
    for (const { path, body } of calls) {
      const { id: model, providers } = await t.app.services.catalog.getModel(body.model);
      const provider = providers[0]!.providerId;
      const before = await metrics();
      const response = await t.call(path, { body, key: secret });
      expect(response.status, path).toBe(200);
      await response.arrayBuffer();
      await t.app.services.billing.flush(accountId);
      const after = await metrics();
      const moved = (name: string, labels: Record<string, string>) =>
        after.value(name, labels) - before.value(name, labels);
      expect(moved('lagoon_paid_calls_total', { model, provider }), path).toBe(1);
      expect(moved('lagoon_paid_calls_total', { model, provider: 'other' }), path).toBe(0);
      expect(moved('lagoon_spend_usd_total', { model, provider }), path).toBeGreaterThan(0);
    }
  });

  it('counts transcription, web search and JSON-RPC by the provider or node that answered', async () => {
    const form = new FormData();
    form.set('model', 'lagoon-sim-transcribe');
    form.set('file', new Blob([new Uint8Array(await toneSample(1, 440, 'wav'))], { type: 'audio/wav' }), 'tone.wav');
    const transcriber = (await t.app.services.catalog.getModel('lagoon-sim-transcribe')).providers[0]!.providerId;
    const calls = [
      {
        send: () =>
          t.app.fetch(
            new Request('http://lagoon.test/api/v1/audio/transcriptions', {
              method: 'POST',
              headers: { authorization: `Bearer ${secret}` },
              body: form,
            }),
          ),
        series: { model: 'lagoon-sim-transcribe', provider: transcriber },
      },
      {
        send: () => t.call('/api/v1/augment/search', { body: { query: 'otters', limit: 2 }, key: secret }),
        series: { model: 'other', provider: 'env:searxng' },
      },
      {
        send: () =>
          t.call('/api/v1/crypto/rpc/ethereum-sepolia', {
            body: { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] },
            key: secret,
          }),
        series: { model: 'other', provider: 'env:ethereum-sepolia#1' },
      },
    ];
    for (const { send, series } of calls) {
      const before = await metrics();
      const response = await send();
      expect(response.status, series.provider).toBe(200);
      await response.arrayBuffer();
      await t.app.services.cryptoRpc.flush();
      await t.app.services.billing.flush(accountId);
      const after = await metrics();
      const moved = (labels: Record<string, string>) =>
        after.value('lagoon_paid_calls_total', labels) - before.value('lagoon_paid_calls_total', labels);
      expect(moved(series), series.provider).toBe(1);
      expect(moved({ model: series.model, provider: 'other' }), series.provider).toBe(0);
    }
  });

  it('shows a queued job in the queue depth, then its wait, run time and charge by model', async () => {
    const model = 'lagoon-sim-video';
    const before = await metrics();
    const queued = await t.call('/api/v1/video/queue', {
      body: { model, prompt: 'a lagoon at dawn', duration: '5s', resolution: '480p' },
      key: secret,
    });
    expect(queued.status).toBe(200);
    const { queue_id: jobId } = (await queued.json()) as { queue_id: string };
    const waiting = await metrics();
    expect(waiting.value('lagoon_job_queue_depth', { model })).toBe(
      before.value('lagoon_job_queue_depth', { model }) + 1,
    );
    expect(waiting.value('lagoon_holds_open')).toBe(1);

    // This app runs no workers: its runner takes the job as a worker would.
    await jobInternals(t.app.services.jobs.service).runner.run(jobId, {
      retryCount: 0,
      lastAttempt: true,
      signal: new AbortController().signal,
    });
    await t.app.services.billing.flush(accountId);
    const after = await metrics();
    const moved = (name: string, labels: Record<string, string>) =>
      after.value(name, labels) - before.value(name, labels);
    expect(after.value('lagoon_job_queue_depth', { model })).toBe(before.value('lagoon_job_queue_depth', { model }));
    expect(moved('lagoon_job_wait_seconds_count', { model })).toBe(1);
    expect(moved('lagoon_job_run_seconds_count', { model, outcome: 'completed' })).toBe(1);
    expect(moved('lagoon_paid_calls_total', { model, provider: SIM })).toBe(1);
    expect(moved('lagoon_spend_usd_total', { model })).toBeGreaterThan(0);
    expect(after.value('lagoon_holds_open')).toBe(0);
    // The money core wrote its batches and timed them.
    expect(after.value('lagoon_billing_batches_total', { outcome: 'ok' })).toBeGreaterThan(0);
    expect(after.value('lagoon_billing_batch_write_seconds_count')).toBeGreaterThan(0);
  });
});

describe(`GET /metrics after an upstream fails over to the next provider (${testDatabaseKind})`, () => {
  let upstream: OpenAIUpstream;
  let config: Awaited<ReturnType<typeof writeOperatorConfig>>;
  let t: TestApp;
  let secret: string;

  beforeAll(async () => {
    upstream = await startOpenAIUpstream();
    // Nothing listens on `down`'s port: each call to it fails at once, and the model falls back to `fake`.
    const closed = await freePort();
    config = await writeOperatorConfig(
      [
        'providers:',
        `  - { id: fake, type: openai-compatible, baseUrl: "${upstream.url}", timeoutMs: 5000, maxRetries: 0 }`,
        `  - { id: down, type: openai-compatible, baseUrl: "http://127.0.0.1:${closed}/v1", timeoutMs: 5000, maxRetries: 0 }`,
        'models:',
        '  - id: fb-chat',
        '    type: text',
        '    name: Fallback Chat',
        '    contextLength: 4096',
        '    providers: [{ id: down, upstreamModel: m }, { id: fake, upstreamModel: test-model }]',
        '    pricing: { input: { usd: 1 }, output: { usd: 3 } }',
      ].join('\n'),
    );
    t = await createTestApp({ LAGOON_CONFIG: config.path });
    ({ secret } = await createAccountWithKey(t.app.services, { credit: { USD: '5' }, type: 'INFERENCE' }));
  }, scaled(120_000));
  afterAll(async () => {
    await t?.close();
    await Promise.all([upstream?.close(), config?.remove()]);
  }, scaled(60_000));

  it('counts the failed provider error by cause, the fallback, then its cooldown; the charge is the one that answered', async () => {
    const ask = () =>
      t.call('/api/v1/chat/completions', {
        body: { model: 'fb-chat', messages: [{ role: 'user', content: 'Hi' }] },
        key: secret,
      });
    const statuses = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await ask()).status);
    expect(statuses).toEqual([200, 200, 200, 200]);
    const after = await scrapeOf(t);
    // Three failures in a row start a cooldown: the fourth call goes to `fake` at once.
    expect(after.value('lagoon_upstream_errors_total', { provider: 'down', operation: 'chat' })).toBe(3);
    expect(after.value('lagoon_upstream_fallbacks_total', { provider: 'down', operation: 'chat' })).toBe(3);
    expect(after.value('lagoon_upstream_cooldowns_total', { provider: 'down' })).toBe(1);
    expect(after.value('lagoon_upstream_cooling_down', { provider: 'down' })).toBe(1);
    expect(after.value('lagoon_upstream_requests_total', { provider: 'fake', outcome: 'ok' })).toBe(4);
    expect(after.value('lagoon_paid_calls_total', { model: 'fb-chat', provider: 'fake' })).toBe(4);
    expect(after.value('lagoon_paid_calls_total', { provider: 'down' })).toBe(0);
    expect(after.value('lagoon_tokens_total', { model: 'fb-chat', provider: 'fake' })).toBeGreaterThan(0);
    const cause = /lagoon_upstream_errors_total\{provider="down",operation="chat",cause="([A-Za-z_]+)"\}/.exec(
      after.text,
    );
    expect(cause?.[1]).toMatch(/^[A-Z_]+$/);
  });
});

const scrapeOf = (t: TestApp) => scrape(() => t.call('/metrics', { key: null }));
