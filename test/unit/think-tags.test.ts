import { describe, expect, it } from 'vitest';
import { splitThinkTags, ThinkTagSplitter } from '../../src/providers/chat/think-tags.ts';

/** Feeds the pieces one by one, as a stream would deliver them. */
function streamed(pieces: string[]): { content: string; reasoning: string } {
  const splitter = new ThinkTagSplitter();
  let content = '';
  let reasoning = '';
  for (const piece of [...pieces.map((p) => splitter.push(p)), splitter.flush()]) {
    content += piece.content;
    reasoning += piece.reasoning;
  }
  return { content, reasoning };
}

describe(ThinkTagSplitter.name, () => {
  it('splits a leading think block out of the content', () => {
    expect(splitThinkTags('<think>\nFirst, add.\n</think>\n\n2 + 2 = 4')).toEqual({
      content: '2 + 2 = 4',
      reasoning: 'First, add.',
    });
    expect(splitThinkTags('No thinking here.')).toEqual({ content: 'No thinking here.', reasoning: null });
  });

  it('gives the same result whatever the chunk boundaries', () => {
    const text = '<think>Plan: be brief.</think>\n\nThe answer is <b>4</b> and 3 < 4.';
    const expected = { content: 'The answer is <b>4</b> and 3 < 4.', reasoning: 'Plan: be brief.' };
    for (let size = 1; size <= 9; size += 1) {
      const pieces = text.match(new RegExp(`[^]{1,${size}}`, 'g')) ?? [];
      expect(streamed(pieces), `pieces of ${size}`).toEqual(expected);
    }
  });

  it('releases a held-back "<" that turned out not to be a tag, and an unclosed block stays reasoning', () => {
    expect(streamed(['Use <', 'thin', ' wire'])).toEqual({ content: 'Use <thin wire', reasoning: '' });
    expect(streamed(['<think>still going', ' on'])).toEqual({ content: '', reasoning: 'still going on' });
  });
});
