import type { ServerResponse } from 'node:http';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  chatAccount,
  eventually,
  readSse,
  startChatServer,
  tokenCostNano,
  UPSTREAM_PRICES,
  upstreamOperatorConfig,
  writeOperatorConfig,
  type ChatServer,
} from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { startOpenAIUpstream, type OpenAIUpstream } from '../helpers/openai-upstream.ts';

/*
 * Every way a chat call can end, and what it costs (docs/billing.md, Chat completions): an upstream error or
 * timeout before output costs nothing; an upstream break, a stall past the idle timeout or a client disconnect
 * mid-stream costs the tokens received; an account without funds gets 402 before the upstream hears of it.
 * Plus: stream chunks are forwarded as they arrive (no buffering).
 */

const PRICE = UPSTREAM_PRICES['up-chat'];
const IDLE_TIMEOUT_MS = 700;

describe(`REST chat completions: endings and faults (${testDatabaseKind})`, () => {
  let upstream: OpenAIUpstream;
  let server: ChatServer;
  let config: Awaited<ReturnType<typeof writeOperatorConfig>>;
  let account: Awaited<ReturnType<typeof chatAccount>>;

  const post = (body: Record<string, unknown>, signal?: AbortSignal) =>
    fetch(`${server.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'up-chat', messages: [{ role: 'user', content: 'Tell me a story' }], ...body }),
      signal,
    });

  /** Nothing charged, nothing held, no usage entry. */
  async function expectNoCharge(before: { amount: bigint }, entriesBefore: number) {
    const after = await account.balance();
    expect(after.amount).toBe(before.amount);
    expect(after.reserved).toBe(0n);
    expect((await account.allEntries()).length).toBe(entriesBefore);
  }

  /** The last request's entries: the prompt as counted, the completion tokens as received, at the model's prices. */
  async function expectChargedFor(before: { amount: bigint }, receivedText: string, note: string) {
    await eventually(async () => (await account.balance()).reserved === 0n);
    const [latest] = await account.allEntries();
    const requestId = latest!.inferenceDetails!.requestId;
    const entries = await account.entries(requestId);
    expect(entries.map((e) => e.sku)).toEqual(['up-chat-llm-input-mtoken', 'up-chat-llm-output-mtoken']);
    const details = entries[0]!.inferenceDetails!;
    expect(details.completionTokens).toBe(countTokens(receivedText));
    expect(entries[0]!.notes).toContain(note);
    const after = await account.balance();
    expect(before.amount - after.amount).toBe(
      tokenCostNano(details.promptTokens!, PRICE.input) + tokenCostNano(details.completionTokens!, PRICE.output),
    );
  }

  beforeAll(async () => {
    upstream = await startOpenAIUpstream();
    config = await writeOperatorConfig(
      upstreamOperatorConfig(upstream.url, { timeoutMs: 2_000, idleTimeoutMs: IDLE_TIMEOUT_MS }),
    );
    server = await startChatServer({ LAGOON_CONFIG: config.path });
    account = await chatAccount(server, '10');
  });
  afterAll(async () => {
    await server.close();
    await Promise.all([upstream.close(), config.remove()]);
  });
  beforeEach(() => upstream.setBehavior({ kind: 'reply' }));

  it('should answer 402 before any upstream call when the account cannot cover the worst case', async () => {
    const poor = await chatAccount(server, '0.000001');
    const calls = upstream.chatRequests().length;
    for (const stream of [false, true]) {
      const error = await poor.client.chat.completions
        .create({ model: 'up-chat', messages: [{ role: 'user', content: 'hi' }], stream })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    }
    const raw = await fetch(`${server.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${poor.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'up-chat', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(await raw.json()).toEqual({
      error: 'Insufficient USD or Diem balance to complete request.',
      code: 'INSUFFICIENT_BALANCE',
    });
    expect(upstream.chatRequests().length).toBe(calls);
  });

  it.each([
    ['an upstream 500', { kind: 'status', status: 500 } as const, 502],
    ['a connection reset', { kind: 'reset' } as const, 502],
    ['a malformed body', { kind: 'malformed' } as const, 502],
    ['an upstream timeout', { kind: 'delay', ms: 10_000 } as const, 504],
  ])(
    'should charge nothing for %s before any output (non-streaming and streaming)',
    async (_what, behavior, status) => {
      for (const stream of [false, true]) {
        upstream.queue(behavior);
        const before = await account.balance();
        const entriesBefore = (await account.allEntries()).length;
        const response = await post({ stream });
        expect(response.status).toBe(status);
        const body = (await response.json()) as { code: string };
        expect(body.code).toBe(status === 504 ? 'REQUEST_TIMEOUT' : 'UPSTREAM_ERROR');
        await expectNoCharge(before, entriesBefore);
      }
    },
  );

  it('should forward each chunk as it arrives: the first reaches the client while the upstream still holds the rest', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    upstream.queue({
      kind: 'custom',
      handle: (_request, response: ServerResponse, body) => {
        const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
          `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(chunk({ role: 'assistant', content: 'First' }));
        // The rest only once the test has seen "First" at the client: a buffering gateway never gets here.
        void gate.then(() => {
          response.write(chunk({ content: ' second' }));
          response.write(chunk({}, 'stop'));
          response.write(
            `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [], usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } })}\n\n`,
          );
          response.end('data: [DONE]\n\n');
        });
      },
    });
    const response = await post({ stream: true });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('First')) {
      const { done, value } = await reader.read();
      if (done) throw new Error('stream ended before the first chunk');
      text += decoder.decode(value, { stream: true });
    }
    expect(text).not.toContain(' second');
    release();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    expect(text).toContain(' second');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('should send an error event then [DONE] when the upstream breaks mid-stream after a pause, and charge what was received', async () => {
    upstream.queue({
      kind: 'reply',
      chunks: ['Once ', 'upon ', 'a ', 'time.'],
      pauseAfterChunks: 2,
      pauseMs: 100,
      breakAfterChunks: 2,
    });
    const before = await account.balance();
    const events = await readSse(await post({ stream: true }));
    expect(events.at(-1)).toBe('[DONE]');
    expect(events.at(-2)).toEqual({ error: { message: expect.any(String), code: 'UPSTREAM_ERROR', status: 502 } });
    const content = events
      .flatMap((e) =>
        typeof e === 'object' && e && 'choices' in e
          ? (e as { choices: { delta: { content?: string } }[] }).choices.map((c) => c.delta.content ?? '')
          : [],
      )
      .join('');
    expect(content).toBe('Once upon ');
    await expectChargedFor(before, 'Once upon ', 'the upstream failed mid-stream');

    // The openai client surfaces the error event as an exception.
    upstream.queue({
      kind: 'reply',
      chunks: ['Once ', 'upon ', 'a ', 'time.'],
      pauseAfterChunks: 1,
      pauseMs: 100,
      breakAfterChunks: 1,
    });
    const stream = await account.client.chat.completions.create({
      model: 'up-chat',
      messages: [{ role: 'user', content: 'again' }],
      stream: true,
    });
    const failure = await (async () => {
      for await (const _chunk of stream) {
        // reading until the error event
      }
    })().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
  });

  it('should end a stream that stalls past the idle timeout with an error event, charging what was received', async () => {
    upstream.queue({ kind: 'reply', chunks: ['Stalled ', 'here ', 'forever'], holdAfterChunks: 2 });
    const before = await account.balance();
    const events = await readSse(await post({ stream: true }));
    expect(events.at(-2)).toEqual({ error: { message: expect.any(String), code: 'REQUEST_TIMEOUT', status: 504 } });
    await expectChargedFor(before, 'Stalled here ', 'the upstream failed mid-stream');
  });

  it('should abort the upstream request when the client disconnects mid-stream, and charge what was received', async () => {
    upstream.queue({ kind: 'reply', chunks: ['Partial ', 'answer ', 'never ', 'finished'], holdAfterChunks: 2 });
    const before = await account.balance();
    const index = upstream.chatRequests().length;
    const controller = new AbortController();
    const response = await post({ stream: true }, controller.signal);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('answer ')) text += decoder.decode((await reader.read()).value, { stream: true });
    expect(upstream.chatRequests()[index]!.clientAborted).toBe(false);
    controller.abort();
    // The upstream sees its connection closed: Lagoon aborted the request it was holding open.
    await eventually(async () => upstream.chatRequests()[index]!.clientAborted);
    await expectChargedFor(before, 'Partial answer ', 'the client disconnected');
  });

  it('should release everything when the client disconnects before any output', async () => {
    upstream.queue({ kind: 'reply', chunks: ['never'], holdAfterChunks: 0 });
    const before = await account.balance();
    const entriesBefore = (await account.allEntries()).length;
    const index = upstream.chatRequests().length;
    const controller = new AbortController();
    const response = await post({ stream: true }, controller.signal);
    const reader = response.body!.getReader();
    await reader.read(); // the role chunk
    controller.abort();
    await eventually(async () => upstream.chatRequests()[index]!.clientAborted);
    await eventually(async () => (await account.balance()).reserved === 0n);
    await expectNoCharge(before, entriesBefore);
  });

  /**
   * A non-streaming call whose client goes away while the upstream is still thinking: the upstream must see the
   * abort well before its own 2 s timeout (which would end the call anyway), and nothing may be charged.
   */
  async function expectDisconnectAbortsAndCostsNothing(send: (signal: AbortSignal) => Promise<unknown>) {
    upstream.queue({ kind: 'delay', ms: 10_000 });
    const before = await account.balance();
    const entriesBefore = (await account.allEntries()).length;
    const index = upstream.chatRequests().length;
    const controller = new AbortController();
    const pending = send(controller.signal).catch((error: unknown) => error);
    await eventually(async () => upstream.chatRequests().length > index);
    controller.abort();
    expect(await pending).toBeInstanceOf(Error);
    await eventually(async () => upstream.chatRequests()[index]!.clientAborted, 1_000);
    await eventually(async () => (await account.balance()).reserved === 0n);
    await expectNoCharge(before, entriesBefore);
  }

  it('should abort the upstream call and charge nothing when a non-streaming client disconnects', async () => {
    await expectDisconnectAbortsAndCostsNothing((signal) => post({}, signal));
  });

  it('should abort the upstream call and charge nothing when a GraphQL chatCompletion client disconnects', async () => {
    await expectDisconnectAbortsAndCostsNothing((signal) =>
      fetch(`${server.url}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          query: 'mutation ($input: ChatCompletionInput!) { chatCompletion(input: $input) { __typename } }',
          variables: { input: { model: 'up-chat', messages: [{ role: 'USER', content: 'Tell me a story' }] } },
        }),
        signal,
      }),
    );
  });
});
