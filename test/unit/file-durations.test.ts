import { describe, expect, it } from 'vitest';
import { longestFirst } from '../file-durations.ts';

describe('the order test files are handed to the workers', () => {
  it('puts files without a record first, then the longest recorded, keeping ties in their order', () => {
    const recorded: Record<string, number> = { short: 0.4, long: 40, middle: 9, alsoMiddle: 9 };
    const files = ['short', 'middle', 'new', 'long', 'alsoMiddle', 'newer'];
    expect(longestFirst(files, (file) => recorded[file])).toEqual([
      'new',
      'newer',
      'long',
      'middle',
      'alsoMiddle',
      'short',
    ]);
  });
});
