import { describe, expect, it } from 'vitest';
import { limitCompletion, StreamOutputLimit } from '../../src/chat/output-limit.ts';
import type { UpstreamChatCompletion, UpstreamChunkChoice } from '../../src/providers/chat/chat-engine.ts';

/* max_completion_tokens held per choice against an upstream that ignores it (" word" is one o200k token). */

const delta = (index: number, fields: UpstreamChunkChoice['delta']): UpstreamChunkChoice => ({
  index,
  delta: fields,
  finish_reason: null,
});

describe('output limit', () => {
  it('should cut each choice of a stream at the limit, reasoning counted first, and bill what was forwarded', () => {
    const limit = new StreamOutputLimit(3, 2);
    expect(limit.apply(delta(0, { reasoning_content: ' word word' }))).toEqual(
      delta(0, { reasoning_content: ' word word' }),
    );
    expect(
      limit.apply(delta(0, { content: ' word word', tool_calls: [{ index: 0, function: { name: 'f' } }] })),
    ).toEqual({ index: 0, delta: { content: ' word' }, finish_reason: 'length' });
    expect(limit.apply(delta(0, { content: ' word' }))).toBeUndefined();
    expect(limit.reached).toBe(false);
    expect(
      limit.apply(
        delta(1, {
          tool_calls: [
            {
              index: 0,
              id: 'c',
              type: 'function',
              function: { name: 'lookup', arguments: '{"q": "a long question"}' },
            },
          ],
        }),
      ),
    ).toMatchObject({
      finish_reason: 'length',
      delta: { tool_calls: [{ index: 0, id: 'c', function: { name: 'lookup' } }] },
    });
    expect(limit.reached).toBe(true);
    expect(limit.billable(999)).toBe(6);
  });

  it('should leave a stream within the limit alone and cap a reported count at the limit of every choice', () => {
    const limit = new StreamOutputLimit(10, 2);
    for (let i = 0; i < 10; i += 1)
      expect(limit.apply(delta(i % 2, { content: ' word' }))).toEqual(delta(i % 2, { content: ' word' }));
    expect(limit.reached).toBe(false);
    expect(limit.billable(12)).toBe(12);
    expect(limit.billable(61)).toBe(20);
  });

  it('should cut a finished completion, dropping a tool call cut short', () => {
    const completion: UpstreamChatCompletion = {
      id: 'x',
      created: 0,
      usage: null,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: ' word'.repeat(9), reasoning_content: null, tool_calls: [] },
          finish_reason: 'stop',
          stop_reason: null,
          logprobs: null,
        },
        {
          index: 1,
          message: {
            role: 'assistant',
            content: ' word',
            reasoning_content: null,
            tool_calls: [
              { id: 'c', type: 'function', function: { name: 'lookup', arguments: '{"q": "a long question"}' } },
            ],
          },
          finish_reason: 'tool_calls',
          stop_reason: null,
          logprobs: null,
        },
      ],
    };
    const { completion: cut, completionTokens } = limitCompletion(completion, 4, 61);
    expect(
      cut.choices.map((choice) => [choice.message.content, choice.message.tool_calls.length, choice.finish_reason]),
    ).toEqual([
      [' word'.repeat(4), 0, 'length'],
      [' word', 0, 'length'],
    ]);
    expect(completionTokens).toBe(8);
    expect(limitCompletion(completion, 100, 61)).toEqual({ completion, completionTokens: 61 });
  });
});
