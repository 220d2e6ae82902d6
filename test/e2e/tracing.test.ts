import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { activeTraceId, startTracing, tracingOn, type Tracing } from '../../src/observability/tracing.ts';
import {
  chatAccount,
  startChatServer,
  upstreamOperatorConfig,
  writeOperatorConfig,
  type ChatServer,
} from '../helpers/chat.ts';
import { eventually } from '../helpers/eventually.ts';
import { startOpenAIUpstream, type OpenAIUpstream } from '../helpers/openai-upstream.ts';
import { attributeOf, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.ts';
import { serverStorage, startServer } from '../helpers/server-process.ts';
import { scaled } from '../helpers/time-scale.ts';

/*
 * OpenTelemetry tracing (src/observability/): Lagoon exports its spans over OTLP/HTTP to a receiver in this process.
 * One paid streamed chat with a caller's traceparent gives the tree server → auth, hold, upstream (with its time to
 * first byte), settle, database statements; the upstream gets the trace; a queued job's run continues the trace that
 * queued it; nothing exported carries the key's secret, the prompt or the completion. Without an endpoint (or with
 * the SDK disabled) nothing is exported.
 */

const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;
const PROMPT = 'purple-walrus-prompt-marker: tell me a story';
const COMPLETION = 'zebra-completion-marker answers';
const JOB_PROMPT = 'orange-heron-job-prompt-marker flying';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const traceparentOf = (traceId: string, parentId: string) => `00-${traceId}-${parentId}-01`;

/** The span's ancestors' names, nearest first (within the spans received). */
function ancestors(spans: readonly ReceivedSpan[], span: ReceivedSpan): ReceivedSpan[] {
  const byId = new Map(spans.map((each) => [each.spanId, each]));
  const chain: ReceivedSpan[] = [];
  for (let parent = span.parentSpanId && byId.get(span.parentSpanId); parent;) {
    chain.push(parent);
    parent = parent.parentSpanId ? byId.get(parent.parentSpanId) : undefined;
  }
  return chain;
}

describe('tracing exported over OTLP (in process)', () => {
  let receiver: OtlpReceiver;
  let tracing: Tracing | undefined;
  let upstream: OpenAIUpstream;
  let config: Awaited<ReturnType<typeof writeOperatorConfig>>;
  let server: ChatServer;
  let account: Awaited<ReturnType<typeof chatAccount>>;
  const saved = { ...process.env };

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    // The SDK reads the standard variables itself; a short batch delay gets the spans out quickly.
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
    process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
    process.env.OTEL_SERVICE_NAME = 'lagoon-under-test';
    tracing = await startTracing(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }).tracing);
    upstream = await startOpenAIUpstream();
    config = await writeOperatorConfig(upstreamOperatorConfig(upstream.url));
    // The database opens after tracing started: its statements get spans. Workers run the queued jobs here.
    server = await startChatServer({ LAGOON_CONFIG: config.path, LAGOON_JOB_WORKERS: 'true' });
    account = await chatAccount(server, '10');
  }, scaled(120_000));

  afterAll(async () => {
    await server?.close();
    await tracing?.shutdown();
    for (const name of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_BSP_SCHEDULE_DELAY', 'OTEL_SERVICE_NAME'])
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    await Promise.all([upstream?.close(), config?.remove(), receiver?.close()]);
  }, scaled(60_000));

  it('should export a paid streamed chat as one tree under the caller’s trace, and pass the trace upstream', async () => {
    expect(tracingOn()).toBe(true);
    upstream.setBehavior({ kind: 'reply', content: COMPLETION, chunks: ['zebra-completion-marker', ' answers'] });
    const traceId = hex(16);
    const callerSpan = hex(8);
    const response = await fetch(`${server.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${account.secret}`,
        'content-type': 'application/json',
        traceparent: traceparentOf(traceId, callerSpan),
        tracestate: 'vendor=abc',
      },
      body: JSON.stringify({ model: 'up-chat', stream: true, messages: [{ role: 'user', content: PROMPT }] }),
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('zebra-completion-marker');

    const spansOf = () => receiver.spans.filter((span) => span.traceId === traceId);
    await eventually(async () => {
      const names = spansOf().map((span) => span.name);
      for (const name of ['POST /api/v1/chat/completions', 'auth', 'billing hold', 'upstream chat_stream'])
        expect(names).toContain(name);
      expect(names).toContain('billing settle');
    }, 10_000);
    const spans = spansOf();
    const root = spans.find((span) => span.kind === SERVER)!;
    expect(root).toMatchObject({ name: 'POST /api/v1/chat/completions', parentSpanId: callerSpan });
    expect(attributeOf(root, 'http.route')).toBe('/api/v1/chat/completions');
    expect(Number(attributeOf(root, 'http.response.status_code'))).toBe(200);
    expect(root.resource['service.name']).toBe('lagoon-under-test');
    for (const name of ['auth', 'billing hold', 'upstream chat_stream', 'billing settle']) {
      const span = spans.find((each) => each.name === name)!;
      expect(ancestors(spans, span), name).toContain(root);
    }
    const auth = spans.find((span) => span.name === 'auth')!;
    expect(attributeOf(auth, 'lagoon.auth.kind')).toBe('apiKey');

    const call = spans.find((span) => span.name === 'upstream chat_stream')!;
    expect(call.kind).toBe(CLIENT);
    expect(attributeOf(call, 'lagoon.upstream.provider')).toBe('fake');
    expect(attributeOf(call, 'lagoon.upstream.model')).toBe('test-model');
    expect(attributeOf(call, 'lagoon.upstream.outcome')).toBe('ok');
    expect(Number(attributeOf(call, 'lagoon.upstream.ttfb_ms'))).toBeGreaterThanOrEqual(0);
    expect(call.events?.map((event) => event.name)).toContain('first byte');
    // The upstream was asked within the client span: same trace, that span as the parent.
    const asked = upstream.chatRequests().at(-1)!;
    expect(asked.headers.traceparent).toBe(traceparentOf(traceId, call.spanId));
    expect(asked.headers.tracestate).toBe('vendor=abc');

    // Database statements of the call (the key's lookup, the lease) are spans of the same trace.
    const statements = spans.filter((span) => span.name.startsWith('db '));
    expect(statements.length).toBeGreaterThan(0);
    expect(attributeOf(statements[0]!, 'db.system.name')).toBe('postgresql');
  });

  it('should continue a queued job’s trace in the worker that runs it', async () => {
    const traceId = hex(16);
    const queued = await fetch(`${server.url}/api/v1/video/queue`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${account.secret}`,
        'content-type': 'application/json',
        traceparent: traceparentOf(traceId, hex(8)),
      },
      body: JSON.stringify({ model: 'lagoon-sim-video', prompt: JOB_PROMPT, duration: '5s', resolution: '480p' }),
    });
    expect(queued.status).toBe(200);
    const { queue_id } = (await queued.json()) as { queue_id: string };
    await eventually(async () => {
      const run = receiver.spans.find((span) => span.name === 'job run' && span.traceId === traceId);
      expect(run).toBeDefined();
      expect(run!.kind).toBe(CONSUMER);
      expect(attributeOf(run!, 'lagoon.job.id')).toBe(queue_id);
    }, 60_000);
    const queueing = receiver.spans.find((span) => span.traceId === traceId && span.kind === SERVER);
    expect(queueing?.name).toBe('POST /api/v1/video/queue');
  });

  it('should export no key secret, prompt or completion in any span', async () => {
    // Whatever is still buffered goes out first.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.bodies.length).toBeGreaterThan(0);
    const exported = receiver.bodies.join('\n');
    for (const secret of [account.secret, account.adminSecret, 'purple-walrus', 'zebra-completion', 'orange-heron'])
      expect(exported).not.toContain(secret);
  });
});

describe('tracing off', () => {
  it('should be off without an OTLP endpoint, or with the SDK disabled or the exporter none', () => {
    expect(tracingOn()).toBe(false);
    expect(activeTraceId()).toBeUndefined();
    expect(loadConfig({}).tracing.enabled).toBe(false);
    expect(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' }).tracing.enabled).toBe(
      true,
    );
    const url = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    expect(loadConfig({ ...url, OTEL_SDK_DISABLED: 'true' }).tracing.enabled).toBe(false);
    expect(loadConfig({ ...url, OTEL_TRACES_EXPORTER: 'none' }).tracing.enabled).toBe(false);
  });

  it(
    'should export nothing from a server process with the SDK disabled, and its spans once an endpoint is set',
    async () => {
      const receiver = await startOtlpReceiver();
      // One data directory for both starts: the second one finds its database made.
      const storage = await serverStorage('lagoon-tracing-');
      const otlp = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50' };
      const models = (url: string, traceId: string) =>
        fetch(`${url}/api/v1/models`, { headers: { traceparent: `00-${traceId}-${hex(8)}-01` } });
      try {
        const off = await startServer({ ...storage.env, ...otlp, OTEL_SDK_DISABLED: 'true' });
        try {
          expect((await models(off.url, hex(16))).status).toBe(200);
          await new Promise((resolve) => setTimeout(resolve, scaled(500)));
          expect(receiver.bodies).toEqual([]);
        } finally {
          expect(await off.stop()).toBe(0);
        }
        expect(receiver.bodies).toEqual([]);

        const on = await startServer({ ...storage.env, ...otlp });
        try {
          const traceId = hex(16);
          expect((await models(on.url, traceId)).status).toBe(200);
          await eventually(async () => {
            const span = receiver.spans.find((each) => each.traceId === traceId && each.kind === SERVER);
            expect(span?.name).toBe('GET /api/v1/models');
            expect(span?.resource['service.name']).toBe('lagoon');
          }, 10_000);
        } finally {
          expect(await on.stop()).toBe(0);
        }
      } finally {
        await receiver.close();
        await storage.remove();
      }
    },
    scaled(180_000),
  );
});
