import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ChunkNormaliser, reportsError } from '../../src/providers/chat/openai-wire.ts';

/*
 * The stream-event reader of the OpenAI-compatible adapter is written by hand (it runs for every event of every
 * stream). This schema is the shape it must accept, as zod would say it: everything optional, `null` as absent,
 * unknown fields ignored, counts whole and non-negative. The property test below checks that both agree on which
 * events are chunks, over many variations of real events.
 */
const Count = z.number().int().nonnegative();
const optional = <T extends z.ZodType>(schema: T) => schema.nullable().optional();
const ChunkSchema = z.looseObject({
  id: optional(z.string()),
  created: optional(z.number()),
  choices: optional(
    z.array(
      z.looseObject({
        index: Count.default(0),
        delta: z
          .looseObject({
            role: optional(z.string()),
            content: optional(z.string()),
            reasoning_content: optional(z.string()),
            reasoning: optional(z.string()),
            tool_calls: optional(
              z.array(
                z.looseObject({
                  index: Count.default(0),
                  id: optional(z.string()),
                  type: optional(z.string()),
                  function: optional(
                    z.looseObject({
                      name: optional(z.string()),
                      arguments: optional(z.union([z.string(), z.record(z.string(), z.unknown())])),
                    }),
                  ),
                }),
              ),
            ),
          })
          .default({}),
        finish_reason: optional(z.string()),
        stop_reason: optional(z.union([z.string(), z.number()])),
        logprobs: optional(z.record(z.string(), z.unknown())),
      }),
    ),
  ),
  usage: optional(
    z.looseObject({
      prompt_tokens: Count.default(0),
      completion_tokens: Count.default(0),
      total_tokens: optional(Count),
      prompt_tokens_details: optional(z.looseObject({ cached_tokens: optional(Count) })),
    }),
  ),
});

const read = (event: unknown, splitThink = false) =>
  new ChunkNormaliser(splitThink, 'chatcmpl-fallback').normalise(event);

const CREATED = 1_795_000_000;
const samples: unknown[] = [
  {
    id: 'c1',
    object: 'chat.completion.chunk',
    created: CREATED,
    model: 'm',
    choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null }],
  },
  { id: 'c1', created: CREATED, choices: [{ index: 0, delta: {}, finish_reason: 'stop', stop_reason: 13 }] },
  {
    id: 'c1',
    created: CREATED,
    choices: [],
    usage: { prompt_tokens: 24, completion_tokens: 40, total_tokens: 64, prompt_tokens_details: { cached_tokens: 8 } },
  },
  {
    id: 'c2',
    created: CREATED,
    choices: [
      {
        index: 1,
        delta: {
          reasoning: 'Plan',
          tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q"' } }],
        },
        logprobs: { content: [] },
      },
    ],
  },
  { choices: [{ delta: { tool_calls: [{ function: { arguments: { q: 'tides' } } }] } }] },
  { choices: null, usage: null },
];

/** Every way of breaking or loosening one field of a sample: drop it, null it, or give it a value of another type. */
function* variations(value: unknown): Generator<unknown> {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1)
      for (const inner of variations(value[i])) yield value.map((item, j) => (j === i ? inner : item));
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const { [key]: _removed, ...without } = record;
    yield without;
    for (const replacement of [null, 'text', -1, 1.5, 7, true, [], {}, [{}]]) yield { ...record, [key]: replacement };
    for (const inner of variations(record[key])) yield { ...record, [key]: inner };
  }
}

describe('ChunkNormaliser (stream events read by hand)', () => {
  it('accepts exactly the events the chunk schema accepts, over every one-field variation of real events', () => {
    let checked = 0;
    for (const sample of samples) {
      for (const event of [sample, ...variations(sample)]) {
        const expected = ChunkSchema.safeParse(event).success;
        expect({ event, accepted: read(event) !== undefined }).toEqual({ event, accepted: expected });
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(400);
    for (const notAnObject of [null, undefined, 'data', 3, [], [{ choices: [] }]])
      expect(read(notAnObject)).toBeUndefined();
  });

  it('normalises content, reasoning, tool calls, logprobs, stop reasons and usage', () => {
    expect(read(samples[0])).toEqual({
      id: 'c1',
      created: CREATED,
      choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null }],
    });
    expect(read(samples[1])).toEqual({
      id: 'c1',
      created: CREATED,
      choices: [{ index: 0, delta: {}, finish_reason: 'stop', stop_reason: 13 }],
    });
    expect(read(samples[2])).toEqual({
      id: 'c1',
      created: CREATED,
      choices: [],
      usage: { prompt_tokens: 24, completion_tokens: 40, total_tokens: 64, cached_tokens: 8 },
    });
    expect(read(samples[3])?.choices).toEqual([
      {
        index: 1,
        delta: {
          reasoning_content: 'Plan',
          tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q"' } }],
        },
        finish_reason: null,
        logprobs: { content: [] },
      },
    ]);
    // Ollama's object arguments become the JSON string; missing ids and times are filled in.
    const ollama = read(samples[4]);
    expect(ollama?.choices[0]?.delta.tool_calls).toEqual([{ index: 0, function: { arguments: '{"q":"tides"}' } }]);
    expect(ollama).toMatchObject({ id: 'chatcmpl-fallback', created: expect.any(Number) as number });
    expect(read(samples[5])).toMatchObject({ choices: [], usage: null });
    // Usage without a total or details: the total is the sum, nothing cached.
    expect(read({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 4 } })?.usage).toEqual({
      prompt_tokens: 3,
      completion_tokens: 4,
      total_tokens: 7,
      cached_tokens: 0,
    });
    // reasoning_content wins over its alias; a null or non-assistant role is left out.
    expect(
      read({ choices: [{ delta: { role: 'tool', reasoning_content: 'a', reasoning: 'b', content: null } }] })
        ?.choices[0]?.delta,
    ).toEqual({ reasoning_content: 'a' });
  });

  it('splits <think> blocks across events when asked, and flushes held-back text at the finish', () => {
    const normaliser = new ChunkNormaliser(true, 'x');
    const deltas = ['<think>Plan', ' it</thi', 'nk>Answer <', ''].map(
      (content, i) =>
        normaliser.normalise({ choices: [{ delta: { content }, finish_reason: i === 3 ? 'stop' : null }] })?.choices[0]
          ?.delta,
    );
    expect(deltas.map((delta) => delta?.reasoning_content ?? '').join('')).toBe('Plan it');
    expect(deltas.map((delta) => delta?.content ?? '').join('')).toBe('Answer <');
  });

  it('tells an error event apart', () => {
    expect(reportsError({ error: { message: 'engine died' } })).toBe(true);
    expect(reportsError({ error: null, choices: [] })).toBe(false);
    expect(reportsError('error')).toBe(false);
  });
});
