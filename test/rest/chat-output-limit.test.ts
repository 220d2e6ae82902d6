import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chatAccount,
  requestIdOf,
  startChatServer,
  tokenCostNano,
  UPSTREAM_PRICES,
  upstreamOperatorConfig,
  writeOperatorConfig,
  type ChatServer,
} from '../helpers/chat.ts';
import type { UsageEntryWire } from '../helpers/billing.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { startOpenAIUpstream, type OpenAIUpstream } from '../helpers/openai-upstream.ts';

/*
 * An upstream that ignores max_completion_tokens / max_tokens (the fake upstream never honours them): Lagoon cuts
 * the answer at the limit with finish_reason "length", aborts the upstream, and bills exactly the limit, so the
 * usage entry's units × price is its amount. It used to pass 60 chunks on for a limit of 5 and record 61 units
 * for the price of 5.
 */

const PRICE = UPSTREAM_PRICES['up-chat'];
const LIMIT = 5;
/** 60 chunks of one o200k token each (" word"), with the usage an upstream that ignored the limit reports. */
const RUNAWAY = {
  kind: 'reply' as const,
  content: ' word'.repeat(60),
  chunks: Array.from({ length: 60 }, () => ' word'),
  chunkDelayMs: 10,
  usage: { prompt_tokens: 20, completion_tokens: 61 },
};

/** Every usage line costs its units × its price per 1M tokens (rounded up to the nano-USD). */
function expectUnitsTimesPrice(entries: readonly UsageEntryWire[]): void {
  for (const entry of entries) {
    const perMillion = entry.sku.endsWith('-output-mtoken') ? PRICE.output : PRICE.input;
    expect(BigInt(Math.round(-entry.amount * 1e9)), entry.sku).toBe(tokenCostNano(entry.units, perMillion));
  }
}

describe(`chat completions from an upstream that ignores max_completion_tokens (${testDatabaseKind})`, () => {
  let upstream: OpenAIUpstream;
  let server: ChatServer;
  let config: Awaited<ReturnType<typeof writeOperatorConfig>>;
  let account: Awaited<ReturnType<typeof chatAccount>>;

  beforeAll(async () => {
    upstream = await startOpenAIUpstream({ behavior: RUNAWAY });
    config = await writeOperatorConfig(upstreamOperatorConfig(upstream.url));
    server = await startChatServer({ LAGOON_CONFIG: config.path });
    account = await chatAccount(server, '10');
  });
  afterAll(async () => {
    await server.close();
    await Promise.all([upstream.close(), config.remove()]);
  });

  it('should stop a stream at the limit with finish_reason "length", abort the upstream and charge the limit', async () => {
    const before = await account.balance();
    const stream = await account.client.chat.completions.create({
      model: 'up-chat',
      messages: [{ role: 'user', content: 'Talk forever' }],
      max_completion_tokens: LIMIT,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);

    const content = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.delta.content ?? '')).join('');
    expect(content).toBe(' word'.repeat(LIMIT));
    const finishes = chunks
      .flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason))
      .filter((reason) => reason !== null);
    expect(finishes).toEqual(['length']);
    const usage = chunks.at(-1)!.usage!;
    expect(usage.completion_tokens).toBe(LIMIT);
    expect((await upstream.waitForClientAbort(5_000)).clientAborted).toBe(true);

    const entries = await account.entries(requestIdOf(chunks[0]!.id));
    const output = entries.find((entry) => entry.sku === 'up-chat-llm-output-mtoken')!;
    expect(output.units).toBe(LIMIT);
    expect(output.notes).toContain('max_completion_tokens');
    expectUnitsTimesPrice(entries);
    const input = entries.find((entry) => entry.sku === 'up-chat-llm-input-mtoken')!;
    expect(input.units).toBe(usage.prompt_tokens);
    const after = await account.balance();
    expect(before.amount - after.amount).toBe(
      tokenCostNano(input.units, PRICE.input) + tokenCostNano(LIMIT, PRICE.output),
    );
    expect(after.reserved).toBe(0n);
  });

  it('should cut a completion at max_tokens with finish_reason "length" and charge the limit', async () => {
    const before = await account.balance();
    const completion = await account.client.chat.completions.create({
      model: 'up-chat',
      messages: [{ role: 'user', content: 'Talk forever' }],
      max_tokens: LIMIT,
    });
    expect(completion.choices[0]!.message.content).toBe(' word'.repeat(LIMIT));
    expect(completion.choices[0]!.finish_reason).toBe('length');
    expect(completion.usage).toMatchObject({ prompt_tokens: 20, completion_tokens: LIMIT, total_tokens: 20 + LIMIT });

    const entries = await account.entries(requestIdOf(completion.id));
    expect(entries.map((entry) => [entry.sku, entry.units])).toEqual([
      ['up-chat-llm-input-mtoken', 20],
      ['up-chat-llm-output-mtoken', LIMIT],
    ]);
    expectUnitsTimesPrice(entries);
    const after = await account.balance();
    expect(before.amount - after.amount).toBe(tokenCostNano(20, PRICE.input) + tokenCostNano(LIMIT, PRICE.output));
    expect(after.reserved).toBe(0n);
  });

  it('should cut a chunk that crosses the limit inside it, and leave an answer within the limit alone', async () => {
    upstream.setBehavior({ ...RUNAWAY, chunks: Array.from({ length: 30 }, () => ' word word') });
    const stream = await account.client.chat.completions.create({
      model: 'up-chat',
      messages: [{ role: 'user', content: 'Talk' }],
      max_completion_tokens: LIMIT,
      stream: true,
    });
    let content = '';
    for await (const chunk of stream) content += chunk.choices.map((choice) => choice.delta.content ?? '').join('');
    expect(content).toBe(' word'.repeat(LIMIT));

    upstream.setBehavior({
      kind: 'reply',
      content: ' word'.repeat(LIMIT),
      usage: { prompt_tokens: 20, completion_tokens: LIMIT },
    });
    const within = await account.client.chat.completions.create({
      model: 'up-chat',
      messages: [{ role: 'user', content: 'Talk' }],
      max_completion_tokens: LIMIT,
    });
    expect(within.choices[0]!.message.content).toBe(' word'.repeat(LIMIT));
    expect(within.choices[0]!.finish_reason).toBe('stop');
    expect(within.usage?.completion_tokens).toBe(LIMIT);
    upstream.setBehavior(RUNAWAY);
  });
});
