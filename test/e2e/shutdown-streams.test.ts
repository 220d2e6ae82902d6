import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { createClient, type Client } from 'graphql-sse';
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseNano } from '../../src/billing/money.ts';
import {
  recordingFetch,
  requestIdOf,
  tokenCostNano,
  UPSTREAM_PRICES,
  upstreamOperatorConfig,
  writeOperatorConfig,
} from '../helpers/chat.ts';
import type { UsageEntryWire } from '../helpers/billing.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { startOpenAIUpstream, type OpenAIUpstream } from '../helpers/openai-upstream.ts';
import { runCliProcess, serverStorage, startServer, type ServerProcess } from '../helpers/server-process.ts';
import { scaled } from '../helpers/time-scale.ts';

/*
 * SIGTERM while streams from a slow upstream are open, on the server process `npm start` runs: once the drain time
 * (1 s here) is over, each stream (REST chat through the openai client, REST Responses, the GraphQL subscription over
 * graphql-sse) ends with an error its client recognises as a shutdown, is charged exactly for the tokens it
 * delivered, and its usage entry says the server shut down, not that the client went away.
 */

const ADMIN = 'e2e-shutdown-streams-admin-key';
const CREDIT_USD = '10';
/** The upstream sends these, then holds the connection open without a word (a slow model). */
const PIECES = ['Once ', 'upon ', 'a ', 'time ', 'there ', 'was ', 'a ', 'lagoon.'];
const SENT_BEFORE_HOLD = 4;

const SUBSCRIPTION = `subscription Stream($input: ChatCompletionInput!) {
  chatCompletionStream(input: $input) { id choices { delta { content } } usage { completionTokens } }
}`;

interface StreamChunk {
  id: string;
  choices: { delta: { content: string | null } }[];
}

describe(`open streams at shutdown (server process, ${testDatabaseKind})`, () => {
  let upstream: OpenAIUpstream;
  let server: ServerProcess;
  let env: Record<string, string>;
  let cleanups: (() => Promise<unknown>)[] = [];
  const clients: Client[] = [];

  beforeAll(async () => {
    upstream = await startOpenAIUpstream();
    upstream.setBehavior({ kind: 'reply', chunks: PIECES, holdAfterChunks: SENT_BEFORE_HOLD, usage: null });
    const config = await writeOperatorConfig(
      upstreamOperatorConfig(upstream.url, { timeoutMs: 60_000, idleTimeoutMs: 60_000 }),
    );
    const storage = await serverStorage('lagoon-e2e-shutdown-streams-');
    cleanups = [() => upstream.close(), config.remove, storage.remove];
    env = {
      ...storage.env,
      LAGOON_CONFIG: config.path,
      LAGOON_BOOTSTRAP_ADMIN_KEY: ADMIN,
      LAGOON_SHUTDOWN_TIMEOUT_SECONDS: '1',
    };
    server = await startServer(env);
    const credit = await runCliProcess(
      ['accounts', 'credit', '--key', ADMIN, '--currency', 'USD', '--amount', CREDIT_USD],
      env,
    );
    expect(credit.code, credit.stderr).toBe(0);
  }, scaled(120_000));

  afterAll(async () => {
    for (const client of clients) client.dispose();
    if (server && server.child.exitCode === null) await server.stop();
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it(
    'should end each open stream with a recognisable shutdown error, charged exactly for what it delivered',
    async () => {
      // REST chat, read by the official openai client.
      const openai = new OpenAI({ apiKey: ADMIN, baseURL: `${server.url}/api/v1`, maxRetries: 0, timeout: 60_000 });
      const { data: chatStream, response: chatResponse } = await openai.chat.completions
        .create({ model: 'up-chat', messages: [{ role: 'user', content: 'Tell me a story' }], stream: true })
        .withResponse();
      const chatIterator = chatStream[Symbol.asyncIterator]();
      let chatDelivered = '';
      let chatPieces = 0;
      while (chatPieces < SENT_BEFORE_HOLD) {
        const next = await chatIterator.next();
        expect(next.done).toBe(false);
        const content = next.done ? undefined : next.value.choices[0]?.delta.content;
        if (content) {
          chatDelivered += content;
          chatPieces += 1;
        }
      }

      // REST Responses, read as SSE.
      const responses = await fetch(`${server.url}/api/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'up-chat', input: 'Tell me a story', stream: true }),
      });
      expect(responses.status).toBe(200);
      const responsesEvents = sseEvents(responses);
      let responsesDelivered = '';
      while (responsesDelivered.length < PIECES.slice(0, SENT_BEFORE_HOLD).join('').length) {
        const event = (await responsesEvents.next()).value as { type: string; delta?: string } | undefined;
        expect(event).toBeDefined();
        if (event?.type === 'response.output_text.delta') responsesDelivered += event.delta ?? '';
      }

      // The GraphQL subscription over graphql-sse (another model: its own price and usage lines).
      const graphql = createClient({
        url: `${server.url}/graphql/stream`,
        headers: { authorization: `Bearer ${ADMIN}` },
        fetchFn: recordingFetch,
        retryAttempts: 0,
      });
      clients.push(graphql);
      const subscription = graphql.iterate<{ chatCompletionStream: StreamChunk }>({
        query: SUBSCRIPTION,
        variables: { input: { model: 'up-basic', messages: [{ role: 'USER', content: 'Tell me a story' }] } },
      });
      let graphqlDelivered = '';
      let graphqlId = '';
      let graphqlPieces = 0;
      while (graphqlPieces < SENT_BEFORE_HOLD) {
        const next = await subscription.next();
        expect(next.done).toBe(false);
        const chunk = next.done ? undefined : next.value.data?.chatCompletionStream;
        graphqlId = chunk?.id ?? graphqlId;
        const content = chunk?.choices[0]?.delta.content;
        if (content) {
          graphqlDelivered += content;
          graphqlPieces += 1;
        }
      }

      const exitCode = server.stop();

      // The openai client throws an APIError carrying the shutdown code.
      const chatEnd = await chatIterator.next().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(chatEnd).toBeInstanceOf(APIError);
      expect(chatEnd).toMatchObject({ code: 'SERVER_SHUTTING_DOWN' });

      const tail: { type: string; response?: { status: string; error?: { code: string } } }[] = [];
      for (let next = await responsesEvents.next(); !next.done; next = await responsesEvents.next())
        tail.push(next.value as (typeof tail)[number]);
      expect(tail.at(-1)).toMatchObject({
        type: 'response.failed',
        response: { status: 'failed', error: { code: 'SERVER_SHUTTING_DOWN' } },
      });

      const graphqlTail: unknown[] = [];
      for (let next = await subscription.next(); !next.done; next = await subscription.next())
        graphqlTail.push(next.value);
      expect(graphqlTail).toEqual([
        {
          data: null,
          errors: [expect.objectContaining({ extensions: expect.objectContaining({ code: 'SERVER_SHUTTING_DOWN' }) })],
        },
      ]);

      expect(await exitCode).toBe(0);
      expect(server.output()).not.toContain('shutdown did not finish in time');

      // Back up on the same data: the ledger says what happened.
      server = await startServer(env);
      const entries = await usageEntries(server);
      const byRequest = new Map<string, UsageEntryWire[]>();
      for (const entry of entries) {
        const requestId = entry.inferenceDetails?.requestId ?? '';
        byRequest.set(requestId, [...(byRequest.get(requestId) ?? []), entry]);
      }
      expect(byRequest.size).toBe(3);
      const delivered = [
        { requestId: chatResponse.headers.get('x-request-id')!, text: chatDelivered, model: 'up-chat' as const },
        { requestId: responses.headers.get('x-request-id')!, text: responsesDelivered, model: 'up-chat' as const },
        { requestId: requestIdOf(graphqlId), text: graphqlDelivered, model: 'up-basic' as const },
      ];
      let charged = 0n;
      for (const { requestId, text, model } of delivered) {
        expect(text).toBe(PIECES.slice(0, SENT_BEFORE_HOLD).join(''));
        const lines = byRequest.get(requestId) ?? [];
        expect(lines.map((line) => line.sku).sort()).toEqual([
          `${model}-llm-input-mtoken`,
          `${model}-llm-output-mtoken`,
        ]);
        for (const line of lines) {
          expect(line.notes).toContain('server shutdown');
          expect(line.notes).not.toContain('disconnected');
        }
        const details = lines[0]!.inferenceDetails!;
        expect(details.completionTokens).toBe(countTokens(text));
        const price = UPSTREAM_PRICES[model];
        charged +=
          tokenCostNano(details.promptTokens!, price.input) + tokenCostNano(details.completionTokens!, price.output);
      }
      const usd = await usdBalance(server);
      expect(usd.reserved).toBe(0n);
      expect(usd.amount).toBe(parseNano(CREDIT_USD) - charged);
    },
    scaled(120_000),
  );
});

/** The `data:` payloads of an SSE body as they arrive (`[DONE]` ends the iteration). */
async function* sseEvents(response: Response): AsyncGenerator<unknown> {
  const decoder = new TextDecoder();
  let buffered = '';
  const reader = response.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffered += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice('data: '.length))
        .join('\n');
      if (data === '[DONE]') return;
      if (data) yield JSON.parse(data) as unknown;
    }
  }
}

async function usageEntries(server: ServerProcess): Promise<UsageEntryWire[]> {
  const response = await fetch(`${server.url}/api/v1/billing/usage?limit=500`, {
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: UsageEntryWire[] }).data;
}

async function usdBalance(server: ServerProcess): Promise<{ amount: bigint; reserved: bigint }> {
  const response = await fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ account { balances { currency amount reserved } } }' }),
  });
  const body = (await response.json()) as {
    data: { account: { balances: { currency: string; amount: string; reserved: string }[] } };
  };
  const usd = body.data.account.balances.find((balance) => balance.currency === 'USD')!;
  return { amount: parseNano(usd.amount), reserved: parseNano(usd.reserved) };
}
