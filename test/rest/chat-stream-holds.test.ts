import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator } from '../../src/auth/auth-context.ts';
import { formatNano } from '../../src/billing/money.ts';
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
import { scaled } from '../helpers/time-scale.ts';

/*
 * Calls that outlive the reservation timeout (2 s here, swept every second): a running stream keeps its hold, so it
 * is charged exactly its usage even when the rest of the balance is spent meanwhile; a call whose hold was released
 * anyway is charged as debt (negative balance, new calls refused until a top-up), never for free; and a stream ends
 * at LAGOON_MAX_STREAM_SECONDS with finish_reason "length", charged for what it delivered.
 */

const PRICE = UPSTREAM_PRICES['up-chat'];
const USAGE = { prompt_tokens: 40, completion_tokens: 16 };
const COST = tokenCostNano(USAGE.prompt_tokens, PRICE.input) + tokenCostNano(USAGE.completion_tokens, PRICE.output);

interface Chunk {
  choices: { delta: { content?: string }; finish_reason: string | null }[];
  usage?: { completion_tokens: number };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function chatServer(upstreamUrl: string, env: Record<string, string>) {
  const config = await writeOperatorConfig(upstreamOperatorConfig(upstreamUrl, { timeoutMs: scaled(20_000) }));
  const server = await startChatServer({ LAGOON_CONFIG: config.path, ...env });
  return { server, close: async () => Promise.all([server.close(), config.remove()]) };
}

function post(server: ChatServer, secret: string, body: Record<string, unknown>) {
  return fetch(`${server.url}/api/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'up-chat', messages: [{ role: 'user', content: 'Tell me a long story' }], ...body }),
  });
}

const debit = (server: ChatServer, accountId: string, amount: bigint) =>
  server.t.app.services.accounts.credit(operator(), { accountId, currency: 'USD', amount: `-${formatNano(amount)}` });

for (const leases of ['true', 'false']) {
  describe(`REST chat: calls longer than the reservation timeout (leases ${leases}, ${testDatabaseKind})`, () => {
    let upstream: OpenAIUpstream;
    let app: Awaited<ReturnType<typeof chatServer>>;

    beforeAll(async () => {
      upstream = await startOpenAIUpstream();
      app = await chatServer(upstream.url, {
        LAGOON_RESERVATION_TIMEOUT_SECONDS: '2',
        LAGOON_SWEEP_INTERVAL_SECONDS: '1',
        LAGOON_BALANCE_LEASES: leases,
      });
    });
    afterAll(async () => {
      await app.close();
      await upstream.close();
    });

    it(
      'should keep a running stream held and charge exactly its usage, though the rest of the balance is spent meanwhile',
      async () => {
        const account = await chatAccount(app.server, '1');
        const chunks = Array.from({ length: 16 }, (_, index) => `part${index} `);
        upstream.setBehavior({ kind: 'reply', chunks, chunkDelayMs: 300, usage: USAGE });
        const response = await post(app.server, account.secret, { stream: true });
        expect(response.status).toBe(200);
        const body = readSse(response);
        await sleep(3_200); // past the timeout and a sweep
        const mid = await account.balance();
        expect(mid.reserved).toBeGreaterThan(0n);
        await debit(app.server, account.accountId, mid.amount - mid.reserved);
        const events = await body;
        expect(events.at(-1)).toBe('[DONE]');
        const usageChunk = events.find(
          (event): event is Chunk =>
            typeof event === 'object' && event !== null && 'usage' in event && (event as Chunk).usage !== undefined,
        );
        expect(usageChunk?.usage?.completion_tokens).toBe(USAGE.completion_tokens);
        await eventually(async () => (await account.balance()).reserved === 0n);
        const entries = await account.allEntries();
        expect(entries.map((e) => e.sku).sort()).toEqual(['up-chat-llm-input-mtoken', 'up-chat-llm-output-mtoken']);
        expect(entries.map((e) => e.units).sort((a, b) => a - b)).toEqual([
          USAGE.completion_tokens,
          USAGE.prompt_tokens,
        ]);
        const after = await account.balance();
        expect(after.amount).toBe(mid.reserved - COST);
        expect(after.amount).toBeGreaterThanOrEqual(0n);
      },
      scaled(30_000),
    );

    it(
      'should charge a call whose hold was released and whose balance was spent as debt, and refuse the next call until a top-up',
      async () => {
        const account = await chatAccount(app.server, '1');
        upstream.setBehavior({ kind: 'reply' });
        // The answer is still on its way when the debit below lands: the upstream answers once the test says so.
        let answerNow!: () => void;
        upstream.queue({ kind: 'gate', until: new Promise<void>((resolve) => (answerNow = resolve)) });
        const answer = post(app.server, account.secret, {});
        await eventually(async () => (await account.balance()).reserved > 0n);
        // A non-streamed call is not kept held: past the timeout its hold is released (swept, or its draw expired).
        await eventually(async () => (await account.balance()).reserved === 0n, 5_000);
        const before = await account.balance();
        await debit(app.server, account.accountId, before.amount);
        answerNow();
        const response = await answer;
        expect(response.status).toBe(200);
        const entries = await account.allEntries();
        expect(entries.map((e) => e.sku).sort()).toEqual(['up-chat-llm-input-mtoken', 'up-chat-llm-output-mtoken']);
        const details = entries[0]!.inferenceDetails!;
        const cost =
          tokenCostNano(details.promptTokens!, PRICE.input) + tokenCostNano(details.completionTokens!, PRICE.output);
        const owed = await account.balance();
        expect(owed.amount).toBe(-cost);
        // Only a settlement takes a balance below zero: an operator debit of an account in debt is refused.
        await expect(debit(app.server, account.accountId, 1n)).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
        const refused = await post(app.server, account.secret, {});
        expect(refused.status).toBe(402);
        expect(await refused.json()).toMatchObject({ code: 'INSUFFICIENT_BALANCE' });
        const refusedStream = await post(app.server, account.secret, { stream: true });
        expect(refusedStream.status).toBe(402);
        await app.server.t.app.services.accounts.credit(operator(), {
          accountId: account.accountId,
          currency: 'USD',
          amount: '1',
        });
        const served = await post(app.server, account.secret, {});
        expect(served.status).toBe(200);
        await eventually(async () => (await account.balance()).reserved === 0n);
        expect((await account.balance()).amount).toBe(1_000_000_000n - 2n * cost);
        expect((await account.allEntries()).length).toBe(4);
      },
      scaled(30_000),
    );
  });
}

describe(`REST chat: LAGOON_MAX_STREAM_SECONDS (${testDatabaseKind})`, () => {
  let upstream: OpenAIUpstream;
  let app: Awaited<ReturnType<typeof chatServer>>;

  beforeAll(async () => {
    upstream = await startOpenAIUpstream();
    app = await chatServer(upstream.url, { LAGOON_MAX_STREAM_SECONDS: '1' });
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });

  it(
    'should end a stream at its maximum duration with finish_reason "length", charged for what it delivered',
    async () => {
      const account = await chatAccount(app.server, '1');
      const chunks = Array.from({ length: 40 }, (_, index) => `word${index} `);
      upstream.setBehavior({
        kind: 'reply',
        chunks,
        chunkDelayMs: 200,
        usage: { prompt_tokens: 40, completion_tokens: 40 },
      });
      const started = performance.now();
      const response = await post(app.server, account.secret, { stream: true });
      const events = await readSse(response);
      const elapsed = performance.now() - started;
      expect(elapsed).toBeLessThan(8_000); // before the upstream's 40 chunks (8 s) could all arrive
      expect(events.at(-1)).toBe('[DONE]');
      const data = events.filter((event): event is Chunk => typeof event === 'object' && event !== null);
      const delivered = data.flatMap((chunk) => chunk.choices.map((choice) => choice.delta.content ?? '')).join('');
      expect(delivered.length).toBeGreaterThan(0);
      expect(delivered.length).toBeLessThan(chunks.join('').length);
      const finishes = data
        .flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason))
        .filter((reason) => reason !== null);
      expect(finishes).toEqual(['length']);
      const usage = data.at(-1)?.usage;
      expect(usage?.completion_tokens).toBe(countTokens(delivered));
      await eventually(async () => (await account.balance()).reserved === 0n);
      const entries = await account.allEntries();
      expect(entries[0]?.notes).toContain('maximum stream duration');
      const details = entries[0]!.inferenceDetails!;
      expect(details.completionTokens).toBe(countTokens(delivered));
      expect(1_000_000_000n - (await account.balance()).amount).toBe(
        tokenCostNano(details.promptTokens!, PRICE.input) + tokenCostNano(details.completionTokens!, PRICE.output),
      );
    },
    scaled(30_000),
  );
});
