import OpenAI from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_SYSTEM_PROMPT, requestIdOf, SAGE_PROMPT, tokenCostNano, UPSTREAM_PRICES } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { DEFAULT_REPLY_CONTENT, DEFAULT_USAGE } from '../helpers/openai-upstream.ts';
import { useUpstreamChat, type UpstreamChat } from '../helpers/upstream-chat.ts';

/* Chat completions against a fake OpenAI-compatible upstream declared in the operator config: what the upstream
 * receives, what the client gets, and what is charged. */

const extra = (fields: Record<string, unknown>) => fields as object;
const PRICE = UPSTREAM_PRICES;

describe(`REST chat completions against an OpenAI-compatible upstream (${testDatabaseKind})`, () => {
  const harness = useUpstreamChat();
  let upstream: UpstreamChat['upstream'];
  let account: UpstreamChat['account'];
  const lastBody = harness.lastBody;
  beforeAll(() => {
    ({ upstream, account } = harness);
  });

  it('should forward a completion to the bound upstream model and charge the reported usage exactly', async () => {
    const before = await account.balance();
    const completion = await account.client.chat.completions.create({
      model: 'up-chat',
      messages: [{ role: 'user', content: 'Hello?' }],
      temperature: 0.3,
      seed: 42,
      stop: ['END'],
    });
    const body = lastBody();
    expect(body).toMatchObject({ model: 'test-model', temperature: 0.3, seed: 42, stop: ['END'] });
    expect(body.stream).not.toBe(true);
    expect(body.messages).toEqual([
      { role: 'system', content: OPERATOR_SYSTEM_PROMPT },
      { role: 'user', content: 'Hello?' },
    ]);
    expect(completion.model).toBe('up-chat');
    expect(completion.choices[0]!.message.content).toBe(DEFAULT_REPLY_CONTENT);
    expect(completion.usage).toMatchObject({
      prompt_tokens: DEFAULT_USAGE.prompt_tokens,
      completion_tokens: DEFAULT_USAGE.completion_tokens,
      total_tokens: 19,
    });

    const entries = await account.entries(requestIdOf(completion.id));
    expect(entries.map((e) => [e.sku, e.units, e.pricePerUnitUsd])).toEqual([
      ['up-chat-llm-input-mtoken', 12, 0.0000007],
      ['up-chat-llm-output-mtoken', 7, 0.0000028],
    ]);
    const expected = tokenCostNano(12, PRICE['up-chat'].input) + tokenCostNano(7, PRICE['up-chat'].output);
    expect(entries.reduce((sum, e) => sum + BigInt(Math.round(-e.amount * 1e9)), 0n)).toBe(expected);
    const after = await account.balance();
    expect(before.amount - after.amount).toBe(expected);
    expect(after.reserved).toBe(0n);
  });

  it('should bill cached prompt tokens at the cache-read price, and the extended tier above its threshold', async () => {
    upstream.setBehavior({ kind: 'reply', usage: { prompt_tokens: 1000, completion_tokens: 50, cached_tokens: 400 } });
    let before = await account.balance();
    const cached = await account.client.chat.completions.create({
      model: 'up-chat',
      messages: [{ role: 'user', content: 'long context' }],
    });
    expect(cached.usage).toMatchObject({
      prompt_tokens: 1000,
      completion_tokens: 50,
      prompt_tokens_details: { cached_tokens: 400 },
    });
    const entries = await account.entries(requestIdOf(cached.id));
    expect(entries.map((e) => [e.sku, e.units])).toEqual([
      ['up-chat-llm-cache-read-mtoken', 400],
      ['up-chat-llm-input-mtoken', 600],
      ['up-chat-llm-output-mtoken', 50],
    ]);
    let after = await account.balance();
    expect(before.amount - after.amount).toBe(
      tokenCostNano(600, PRICE['up-chat'].input) +
        tokenCostNano(400, PRICE['up-chat'].cacheRead) +
        tokenCostNano(50, PRICE['up-chat'].output),
    );

    upstream.setBehavior({ kind: 'reply', usage: { prompt_tokens: 150, completion_tokens: 10 } });
    before = after;
    await account.client.chat.completions.create({
      model: 'up-think',
      messages: [{ role: 'user', content: 'over the threshold' }],
    });
    after = await account.balance();
    const { extended } = PRICE['up-think'];
    expect(before.amount - after.amount).toBe(tokenCostNano(150, extended.input) + tokenCostNano(10, extended.output));
  });

  it('should stream the upstream chunks with the upstream usage as the last chunk', async () => {
    upstream.setBehavior({
      kind: 'reply',
      chunks: ['Tide ', 'pools ', 'teem.'],
      usage: { prompt_tokens: 20, completion_tokens: 5 },
      stopReason: 'eos',
    });
    const before = await account.balance();
    const stream = await account.client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'Tell me' }],
      stream: true,
    });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(lastBody()).toMatchObject({ model: 'test-model', stream: true, stream_options: { include_usage: true } });
    expect(chunks.flatMap((c) => c.choices.map((choice) => choice.delta.content ?? '')).join('')).toBe(
      'Tide pools teem.',
    );
    expect(chunks.every((c) => c.model === 'up-chat')).toBe(true);
    const finish = chunks.find((c) => c.choices[0]?.finish_reason)!;
    expect(finish.choices[0]).toMatchObject({ finish_reason: 'stop', stop_reason: 'eos' });
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 });
    const entries = await account.entries(requestIdOf(last.id));
    expect(entries.map((e) => e.units)).toEqual([20, 5]);
    expect(before.amount - (await account.balance()).amount).toBe(
      tokenCostNano(20, PRICE['up-chat'].input) + tokenCostNano(5, PRICE['up-chat'].output),
    );
  });

  it('should count with the tokenizer when the upstream reports no usage (non-streaming and streaming)', async () => {
    upstream.setBehavior({ kind: 'reply', content: 'Counted by the gateway itself.', usage: null });
    const before = await account.balance();
    const completion = await account.client.chat.completions.create({
      model: 'up-basic',
      messages: [{ role: 'user', content: 'count me' }],
    });
    const usage = completion.usage!;
    expect(usage.completion_tokens).toBe(countTokens('Counted by the gateway itself.'));
    expect(usage.prompt_tokens).toBeGreaterThan(countTokens('count me'));
    const [input, output] = await account.entries(requestIdOf(completion.id));
    expect([input!.units, output!.units]).toEqual([usage.prompt_tokens, usage.completion_tokens]);
    const mid = await account.balance();
    expect(before.amount - mid.amount).toBe(
      tokenCostNano(usage.prompt_tokens, PRICE['up-basic'].input) +
        tokenCostNano(usage.completion_tokens, PRICE['up-basic'].output),
    );

    const stream = await account.client.chat.completions.create({
      model: 'up-basic',
      messages: [{ role: 'user', content: 'count me' }],
      stream: true,
    });
    let last: ChatCompletionChunk | undefined;
    for await (const chunk of stream) last = chunk;
    expect(last!.usage).toMatchObject({
      prompt_tokens: usage.prompt_tokens,
      completion_tokens: usage.completion_tokens,
    });
    expect(mid.amount - (await account.balance()).amount).toBe(before.amount - mid.amount);
  });

  it('should pass tools, tool_choice and parallel_tool_calls through, and tool calls back (non-streaming and streaming)', async () => {
    const tools = [
      {
        type: 'function' as const,
        function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
      },
    ];
    upstream.setBehavior({
      kind: 'reply',
      content: null,
      toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"tides"}' }],
    });
    const history = [
      { role: 'user' as const, content: 'Find tides' },
      {
        role: 'assistant' as const,
        content: null,
        tool_calls: [
          { id: 'call_0', type: 'function' as const, function: { name: 'lookup', arguments: '{"q":"moon"}' } },
        ],
      },
      { role: 'tool' as const, tool_call_id: 'call_0', content: 'full moon' },
    ];
    const completion = await account.client.chat.completions.create({
      model: 'up-chat',
      messages: history,
      tools,
      tool_choice: 'required',
      parallel_tool_calls: false,
    });
    expect(lastBody()).toMatchObject({ tools, tool_choice: 'required', parallel_tool_calls: false });
    expect(lastBody().messages.slice(1)).toEqual(history);
    expect(completion.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: {
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"tides"}' } }],
      },
    });

    const stream = await account.client.chat.completions.create({
      model: 'up-chat',
      messages: history,
      tools,
      stream: true,
    });
    const fragments: string[] = [];
    let name = '';
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        name += call.function?.name ?? '';
        fragments.push(call.function?.arguments ?? '');
      }
    }
    expect(name).toBe('lookup');
    expect(fragments.join('')).toBe('{"q":"tides"}');
  });

  it('should pass json_schema to a model that supports it and refuse it (and tools) for one that does not, before any upstream call', async () => {
    upstream.setBehavior({ kind: 'reply', content: '{"name":"Nemo"}' });
    const format = {
      type: 'json_schema' as const,
      json_schema: {
        name: 'fish',
        strict: true,
        schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      },
    };
    const completion = await account.client.chat.completions.create({
      model: 'up-chat',
      messages: [{ role: 'user', content: 'A fish' }],
      response_format: format,
    });
    expect(lastBody().response_format).toEqual(format);
    expect(JSON.parse(completion.choices[0]!.message.content!)).toEqual({ name: 'Nemo' });

    const calls = upstream.chatRequests().length;
    const schemaError = await account.client.chat.completions
      .create({ model: 'up-basic', messages: [{ role: 'user', content: 'A fish' }], response_format: format })
      .catch((e: unknown) => e);
    expect(schemaError).toBeInstanceOf(OpenAI.BadRequestError);
    expect((schemaError as Error).message).toContain('response_format');
    const toolError = await account.client.chat.completions
      .create({
        model: 'up-basic',
        messages: [{ role: 'user', content: 'x' }],
        tools: [{ type: 'function', function: { name: 'f' } }],
      })
      .catch((e: unknown) => e);
    expect((toolError as Error).message).toContain('tools');
    expect(upstream.chatRequests().length).toBe(calls);
  });

  it('should apply a character: its prompt after the operator prompt, its model for a trait, the named model otherwise', async () => {
    const viaTrait = await account.client.chat.completions.create({
      model: 'default:character_slug=test-sage',
      messages: [{ role: 'user', content: 'Who are you?' }],
    });
    expect(viaTrait.model).toBe('up-think');
    expect(lastBody().model).toBe('think-model');
    expect(lastBody().messages[0]).toEqual({ role: 'system', content: `${OPERATOR_SYSTEM_PROMPT}\n\n${SAGE_PROMPT}` });

    const named = await account.client.chat.completions.create({
      model: 'up-basic',
      messages: [
        { role: 'system', content: 'Client system prompt.' },
        { role: 'user', content: 'Who are you?' },
      ],
      ...extra({ venice_parameters: { character_slug: 'test-sage', include_venice_system_prompt: false } }),
    });
    expect(named.model).toBe('up-basic');
    expect(lastBody().messages).toEqual([
      { role: 'system', content: `${SAGE_PROMPT}\n\nClient system prompt.` },
      { role: 'user', content: 'Who are you?' },
    ]);
    expect(named as unknown).toMatchObject({
      service_parameters: { character_slug: 'test-sage', include_venice_system_prompt: false },
    });
  });

  it('should split, strip or switch off reasoning as asked', async () => {
    upstream.setBehavior({ kind: 'reply', content: '<think>Tides follow the moon.</think>The moon.' });
    const split = await account.client.chat.completions.create({
      model: 'up-think',
      messages: [{ role: 'user', content: 'Why tides?' }],
    });
    expect(split.choices[0]!.message).toMatchObject({
      content: 'The moon.',
      reasoning_content: 'Tides follow the moon.',
    });

    const stripped = await account.client.chat.completions.create({
      model: 'up-think:strip_thinking_response=true',
      messages: [{ role: 'user', content: 'Why tides?' }],
    });
    expect(stripped.choices[0]!.message).toMatchObject({ content: 'The moon.', reasoning_content: null });

    upstream.setBehavior({ kind: 'reply', reasoning: 'Thinking hard.', chunks: ['The ', 'moon.'] });
    const stream = await account.client.chat.completions.create({
      model: 'up-think',
      messages: [{ role: 'user', content: 'Why?' }],
      stream: true,
      ...extra({ service_parameters: { strip_thinking_response: true } }),
    });
    const deltas: Record<string, unknown>[] = [];
    for await (const chunk of stream) deltas.push(...chunk.choices.map((c) => c.delta as Record<string, unknown>));
    expect(deltas.some((d) => 'reasoning_content' in d)).toBe(false);
    expect(deltas.map((d) => d.content ?? '').join('')).toBe('The moon.');

    await account.client.chat.completions.create({
      model: 'up-think',
      messages: [{ role: 'user', content: 'Quick' }],
      reasoning_effort: 'high',
      ...extra({ service_parameters: { disable_thinking: true } }),
    });
    expect(lastBody()).toMatchObject({ chat_template_kwargs: { enable_thinking: false }, reasoning_effort: 'high' });
  });
});
