import { describe, expect, it } from 'vitest';
import { tidy } from '../../src/augment/extract/extract.ts';
import { scaled } from '../helpers/time-scale.ts';

describe('extracted text tidying', () => {
  it('should cut trailing spaces, keep one line ending style and at most one blank line', () => {
    expect(tidy(' a \t\r\nb  \r\r\n\n\n\nc\u00a0 \n')).toBe('a\nb\n\nc');
  });

  it(
    'should stay linear on a long run of spaces that ends in text (a row of empty cells)',
    () => {
      // 400,000 spaces before a letter: a trailing-space regular expression retried at every position takes minutes.
      const row = `${' '.repeat(400_000)}x`;
      expect(tidy(`${row}  \n${row}`)).toBe(`x\n${row}`);
    },
    scaled(5_000),
  );
});
