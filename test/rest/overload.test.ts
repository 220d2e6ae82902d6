import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { writeOperatorConfig } from '../helpers/chat.ts';
import { eventually } from '../helpers/eventually.ts';
import { listenLocally } from '../helpers/local-server.ts';
import { createAccountWithKey } from '../helpers/services.ts';
import { scaled } from '../helpers/time-scale.ts';

/**
 * LAGOON_MAX_IN_FLIGHT (rest/in-flight.ts), over HTTP: a slow upstream holds LIMIT chat calls (one of them a
 * stream whose first chunk has arrived); the next call, on any transport, is answered 503 with Retry-After and the
 * error body at once; the health and metrics endpoints still answer; once the held calls end, calls pass again.
 */
const LIMIT = 3;

/** An OpenAI-compatible upstream that holds every chat call until `release()` (a stream after its first chunk). */
async function slowUpstream() {
  const held: (() => void)[] = [];
  const chunk = (delta: object, finish: string | null) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'slow', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      if (req.method === 'GET')
        return res.end(JSON.stringify({ object: 'list', data: [{ id: 'slow', object: 'model' }] }));
      const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { stream?: boolean };
      if (body.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(chunk({ role: 'assistant', content: 'Hel' }, null));
        held.push(() => res.end(`${chunk({ content: 'lo' }, 'stop')}data: [DONE]\n\n`));
        return;
      }
      held.push(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'c',
            object: 'chat.completion',
            created: 1,
            model: 'slow',
            choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
          }),
        );
      });
    });
  });
  const listening = await listenLocally(server);
  return {
    url: `${listening.url}/v1`,
    held: () => held.length,
    release: () => held.splice(0).forEach((answer) => answer()),
    close: listening.close,
  };
}

/** A WebSocket upgrade to /graphql: the status line Lagoon answered (101 when it accepted). */
function upgradeStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}/graphql`, {
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        'sec-websocket-protocol': 'graphql-transport-ws',
      },
    });
    req.on('upgrade', (response, socket) => {
      socket.destroy();
      resolve(response.statusCode ?? 0);
    });
    req.on('response', (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the in-flight limit (LAGOON_MAX_IN_FLIGHT)', () => {
  let upstream: Awaited<ReturnType<typeof slowUpstream>>;
  let operator: Awaited<ReturnType<typeof writeOperatorConfig>>;
  let t: TestApp;
  let server: { url: string; close: () => Promise<void> };
  let key: string;

  beforeAll(async () => {
    upstream = await slowUpstream();
    operator = await writeOperatorConfig(
      [
        'providers:',
        `  - { id: slow-up, type: openai-compatible, baseUrl: "${upstream.url}", timeoutMs: 60000, maxRetries: 0 }`,
        'models:',
        '  - { id: slow-chat, type: text, name: Slow chat, provider: slow-up, upstreamModel: slow, pricing: { input: { usd: 1 }, output: { usd: 1 } } }',
      ].join('\n'),
    );
    t = await createTestApp({ LAGOON_CONFIG: operator.path, LAGOON_MAX_IN_FLIGHT: String(LIMIT) });
    // As src/main.ts serves it: the pipeline's listener, and its upgrade listener for WebSockets.
    const http = createServer(t.app.nodeListener);
    http.on('upgrade', t.app.upgradeListener);
    server = await listenLocally(http);
    ({ secret: key } = await createAccountWithKey(t.app.services, { credit: { USD: '5' }, type: 'INFERENCE' }));
  }, scaled(60_000));

  afterAll(async () => {
    upstream?.release();
    await server?.close();
    await t?.close();
    await upstream?.close();
    await operator?.remove();
  });

  const chat = (stream = false) =>
    fetch(`${server.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'slow-chat', stream, messages: [{ role: 'user', content: 'hi' }] }),
    });

  it(
    'should answer 503 with Retry-After at once past the limit, keep health and metrics, and admit again after',
    async () => {
      // LIMIT calls held by the upstream: two plain ones and a stream whose first chunk the client has read.
      const plain = [chat(), chat()];
      const stream = await chat(true);
      expect(stream.status).toBe(200);
      const reader = stream.body!.getReader();
      expect((await reader.read()).done).toBe(false);
      await eventually(async () => expect(upstream.held()).toBe(LIMIT), scaled(10_000));

      const started = performance.now();
      const refused = await chat();
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(await refused.json()).toMatchObject({
        code: 'SERVICE_UNAVAILABLE',
        error: expect.stringMatching(/capacity/),
      });
      // Answered at once, not queued behind the held calls (they stay held until released below).
      expect(upstream.held()).toBe(LIMIT);
      expect(performance.now() - started).toBeLessThan(scaled(5_000));

      // Every transport: another REST route, GraphQL over HTTP, a WebSocket upgrade.
      expect((await fetch(`${server.url}/api/v1/models`)).status).toBe(503);
      const graphql = await fetch(`${server.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
      expect(graphql.status).toBe(503);
      expect(graphql.headers.get('retry-after')).toBe('1');
      expect(await upgradeStatus(server.url)).toBe(503);

      // The operational endpoints are never refused.
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      const metrics = await fetch(`${server.url}/metrics`);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain('lagoon_');

      upstream.release();
      for (const response of await Promise.all(plain)) {
        expect(response.status).toBe(200);
        await response.text();
      }
      while (!(await reader.read()).done);
      // The held calls have ended: calls pass again, on every transport.
      await eventually(async () => expect((await fetch(`${server.url}/api/v1/models`)).status).toBe(200));
      const again = chat();
      await eventually(async () => expect(upstream.held()).toBe(1), scaled(10_000));
      upstream.release();
      expect((await again).status).toBe(200);
      expect(await upgradeStatus(server.url)).toBe(101);
    },
    scaled(120_000),
  );
});

describe('LAGOON_MAX_IN_FLIGHT', () => {
  it('should default to 1,024 per process, take 0 as no limit, and refuse a negative number', () => {
    expect(loadConfig({}).http.maxInFlight).toBe(1_024);
    expect(loadConfig({ LAGOON_MAX_IN_FLIGHT: '0' }).http.maxInFlight).toBe(0);
    expect(() => loadConfig({ LAGOON_MAX_IN_FLIGHT: '-1' })).toThrow(/LAGOON_MAX_IN_FLIGHT/);
  });
});
