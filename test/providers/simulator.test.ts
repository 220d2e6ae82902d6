import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ValidationError } from '../../src/errors.ts';
import type { UpstreamChatChunk, UpstreamChatRequest } from '../../src/providers/chat/chat-engine.ts';
import { SimulatorChatEngine } from '../../src/providers/chat/simulator-chat.engine.ts';

const sim = new SimulatorChatEngine('simulator', { chunkDelayMs: 0 });
/** zod's JSON Schema reader is the independent check that generated values satisfy the schema. */
const validator = (schema: object) => z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
const ask = (content: string, extra: Record<string, unknown> = {}): UpstreamChatRequest => ({
  model: 'lagoon-sim-chat',
  messages: [{ role: 'user', content }],
  ...extra,
});
const QUESTION = 'How do I get better at growing tomatoes on a balcony garden?';

async function collect(
  request: UpstreamChatRequest,
  options: { reasoning?: boolean } = {},
): Promise<UpstreamChatChunk[]> {
  const chunks: UpstreamChatChunk[] = [];
  for await (const chunk of await sim.stream(request, options)) chunks.push(chunk);
  return chunks;
}

const WEATHER_TOOL = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: {
      type: 'object',
      properties: {
        city: { type: 'string', minLength: 2 },
        unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
        days: { type: 'integer', minimum: 1, maximum: 7 },
      },
      required: ['city', 'unit'],
      additionalProperties: false,
    },
  },
};

describe('SimulatorChatEngine', () => {
  it('answers deterministically in readable English about the question, with usage', async () => {
    const first = await sim.complete(ask(QUESTION, { seed: 42 }), {});
    const again = await sim.complete(ask(QUESTION, { seed: 42 }), {});
    const otherSeed = await sim.complete(ask(QUESTION, { seed: 7 }), {});
    const content = first.choices[0]?.message.content ?? '';
    expect(again.choices[0]?.message.content).toBe(content);
    expect(otherSeed.choices[0]?.message.content).not.toBe(content);
    expect(content).toMatch(/^[A-Z][^]*[.!?]$/);
    expect(content.toLowerCase()).toContain('tomatoes');
    expect(content).not.toMatch(/lorem|ipsum/i);
    expect(first.choices[0]?.finish_reason).toBe('stop');
    expect(first.usage?.completion_tokens).toBe(countTokens(content));
    expect(first.usage?.prompt_tokens).toBeGreaterThan(countTokens(QUESTION));
    expect(first.usage?.total_tokens).toBe((first.usage?.prompt_tokens ?? 0) + (first.usage?.completion_tokens ?? 0));
  });

  it('stops at max_completion_tokens (or max_tokens) with finish_reason length', async () => {
    for (const limit of [
      { max_completion_tokens: 5 },
      { max_tokens: 5 },
      { max_tokens: 50, max_completion_tokens: 5 },
    ]) {
      const completion = await sim.complete(ask(QUESTION, limit), {});
      expect(completion.choices[0]?.finish_reason).toBe('length');
      expect(completion.usage?.completion_tokens).toBe(5);
      expect(countTokens(completion.choices[0]?.message.content ?? '')).toBeLessThanOrEqual(5);
    }
    // max_tokens ≤ 0 is ignored.
    expect((await sim.complete(ask(QUESTION, { max_tokens: 0 }), {})).choices[0]?.finish_reason).toBe('stop');
  });

  it('cuts before a stop string and reports it', async () => {
    const full = (await sim.complete(ask(QUESTION), {})).choices[0]?.message.content ?? '';
    const word = full.split(' ')[3] as string;
    const completion = await sim.complete(ask(QUESTION, { stop: ['NEVER-THERE', word] }), {});
    expect(completion.choices[0]?.message.content).toBe(full.slice(0, full.indexOf(word)));
    expect(completion.choices[0]).toMatchObject({ finish_reason: 'stop', stop_reason: word });
  });

  it('returns n different choices and counts them all', async () => {
    const completion = await sim.complete(ask(QUESTION, { n: 3 }), {});
    expect(completion.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    expect(new Set(completion.choices.map((c) => c.message.content)).size).toBeGreaterThan(1);
    const total = completion.choices.reduce((sum, c) => sum + countTokens(c.message.content ?? ''), 0);
    expect(completion.usage?.completion_tokens).toBe(total);
  });

  it('calls a tool when forced, with arguments valid for its schema', async () => {
    const validate = validator(WEATHER_TOOL.function.parameters);
    for (const toolChoice of ['required', { type: 'function', function: { name: 'get_weather' } }]) {
      const completion = await sim.complete(
        ask('Is it raining?', { tools: [WEATHER_TOOL], tool_choice: toolChoice }),
        {},
      );
      const [choice] = completion.choices;
      expect(choice?.finish_reason).toBe('tool_calls');
      expect(choice?.message.content).toBeNull();
      expect(choice?.message.tool_calls).toHaveLength(1);
      const call = choice?.message.tool_calls[0];
      expect(call?.function.name).toBe('get_weather');
      expect(call?.id).toMatch(/^call_/);
      expect(validate.safeParse(JSON.parse(call?.function.arguments ?? '')).success).toBe(true);
    }
  });

  it('with tool_choice auto: calls a tool the user names, otherwise answers in text; a tool result gets a text reply', async () => {
    const named = await sim.complete(
      ask('Please use get_weather for Lisbon', { tools: [WEATHER_TOOL], tool_choice: 'auto' }),
      {},
    );
    expect(named.choices[0]?.message.tool_calls).toHaveLength(1);
    const text = await sim.complete(ask('Tell me a fun fact about octopuses', { tools: [WEATHER_TOOL] }), {});
    expect(text.choices[0]?.message.tool_calls).toEqual([]);
    expect(text.choices[0]?.message.content).toContain('octopuses');
    const none = await sim.complete(ask('Please use get_weather', { tools: [WEATHER_TOOL], tool_choice: 'none' }), {});
    expect(none.choices[0]?.message.tool_calls).toEqual([]);
    const call = named.choices[0]?.message.tool_calls[0];
    const afterTool = await sim.complete(
      {
        model: 'lagoon-sim-chat',
        tools: [WEATHER_TOOL],
        messages: [
          { role: 'user', content: 'Please use get_weather for Lisbon' },
          { role: 'assistant', content: null, tool_calls: [call] },
          { role: 'tool', tool_call_id: call?.id, content: '{"temperature": 21, "sky": "clear"}' },
        ],
      },
      {},
    );
    expect(afterTool.choices[0]?.message.content).toContain('get_weather');
    expect(afterTool.choices[0]?.message.content).toContain('"temperature": 21');
  });

  it('refuses a tool_choice naming a function that is not in tools', async () => {
    await expect(
      sim.complete(
        ask('x', { tools: [WEATHER_TOOL], tool_choice: { type: 'function', function: { name: 'nope' } } }),
        {},
      ),
    ).rejects.toBeInstanceOf(ValidationError);
  });

  it('produces JSON valid for a response_format json_schema', async () => {
    const schema = {
      type: 'object',
      properties: {
        name: { type: 'string' },
        age: { type: 'integer', minimum: 18, maximum: 99 },
        score: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
        active: { type: 'boolean' },
        role: { enum: ['admin', 'user', 'guest'] },
        tags: { type: 'array', items: { type: 'string', maxLength: 12 }, minItems: 2, maxItems: 4 },
        address: {
          type: 'object',
          properties: { city: { type: 'string' }, zip: { type: 'string', minLength: 5, maxLength: 5 } },
          required: ['city', 'zip'],
          additionalProperties: false,
        },
        nickname: { anyOf: [{ type: 'string' }, { type: 'null' }] },
        born: { type: 'string', format: 'date' },
        pet: { $ref: '#/$defs/pet' },
      },
      required: ['name', 'age', 'score', 'active', 'role', 'tags', 'address', 'nickname', 'born', 'pet'],
      additionalProperties: false,
      $defs: {
        pet: {
          type: 'object',
          properties: { kind: { const: 'cat' }, lives: { type: 'integer', multipleOf: 3, minimum: 1, maximum: 9 } },
          required: ['kind', 'lives'],
        },
      },
    };
    const validate = validator(schema);
    for (const seed of [1, 2, 3, 4, 5]) {
      const completion = await sim.complete(
        ask('Describe a user profile', {
          seed,
          response_format: { type: 'json_schema', json_schema: { name: 'profile', strict: true, schema } },
        }),
        {},
      );
      const value: unknown = JSON.parse(completion.choices[0]?.message.content ?? '');
      const checked = validate.safeParse(value);
      expect(checked.success, JSON.stringify({ value, issues: checked.error?.issues })).toBe(true);
    }
    const object = await sim.complete(ask('Answer in JSON', { response_format: { type: 'json_object' } }), {});
    expect(JSON.parse(object.choices[0]?.message.content ?? '')).toHaveProperty('answer');
  });

  it('emits reasoning_content for reasoning models, within the token budget', async () => {
    const completion = await sim.complete(ask(QUESTION), { reasoning: true });
    const { reasoning_content: reasoning, content } = completion.choices[0]?.message ?? {};
    expect(reasoning).toMatch(/^The user is asking about/);
    expect(completion.usage?.completion_tokens).toBe(countTokens(reasoning ?? '') + countTokens(content ?? ''));
    expect((await sim.complete(ask(QUESTION), {})).choices[0]?.message.reasoning_content).toBeNull();
    const cut = await sim.complete(ask(QUESTION, { max_tokens: 4 }), { reasoning: true });
    expect(cut.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: '' } });
  });

  it('returns logprobs when asked', async () => {
    const completion = await sim.complete(ask(QUESTION, { logprobs: true, top_logprobs: 2 }), {});
    const entries = (completion.choices[0]?.logprobs as { content: { token: string; top_logprobs: unknown[] }[] })
      .content;
    expect(entries.map((e) => e.token).join('')).toBe(completion.choices[0]?.message.content);
    expect(entries[0]?.top_logprobs).toHaveLength(2);
  });

  it('streams the same answer in several small chunks, ending with usage', async () => {
    const request = ask(QUESTION, { seed: 3 });
    const whole = await sim.complete(request, { reasoning: true });
    const chunks = await collect(request, { reasoning: true });
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    const reasoning = chunks.map((c) => c.choices[0]?.delta.reasoning_content ?? '').join('');
    expect(text).toBe(whole.choices[0]?.message.content);
    expect(reasoning).toBe(whole.choices[0]?.message.reasoning_content);
    const contentChunks = chunks.filter((c) => c.choices[0]?.delta.content);
    expect(contentChunks.length).toBeGreaterThan(5);
    for (const chunk of contentChunks)
      expect(countTokens(chunk.choices[0]?.delta.content ?? '')).toBeLessThanOrEqual(5);
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: whole.usage });
  });

  it('streams tool calls as a name then argument fragments', async () => {
    const chunks = await collect(ask('Weather?', { tools: [WEATHER_TOOL], tool_choice: 'required' }));
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(deltas[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'get_weather', arguments: '' } });
    expect(() => JSON.parse(deltas.map((d) => d.function?.arguments ?? '').join(''))).not.toThrow();
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('cancel() ends the stream; the caller’s abort fails it as cancelled', async () => {
    const slow = new SimulatorChatEngine('simulator', { chunkDelayMs: 20 });
    const stream = await slow.stream(ask(QUESTION), {});
    let count = 0;
    for await (const chunk of stream) {
      if (chunk) count += 1;
      if (count === 2) stream.cancel();
    }
    expect(count).toBe(2);
    const controller = new AbortController();
    const aborted = await slow.stream(ask(QUESTION), { signal: controller.signal });
    const reading = (async () => {
      for await (const chunk of aborted) if (chunk) controller.abort();
    })();
    await expect(reading).rejects.toMatchObject({ cancelled: true });
  });
});
