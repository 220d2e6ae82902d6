import { existsSync, readFileSync } from 'node:fs';
import o200kRanks from 'gpt-tokenizer/bpeRanks/o200k_base';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { TOKENIZER_RANKS } from '../../src/runtime-files.ts';
import { countTexts } from '../../src/token-count-pool.ts';
import {
  countTextTokens,
  decodeTokens,
  encodeText,
  PIECE_CHARS,
  textPieces,
  TokenCounter,
} from '../../src/tokenizer.ts';

/* Token counting is linear in the text's length, also for text without whitespace (BPE on one huge word was quadratic). */

let seed = 7;
/** A "word" of pseudo-random lowercase letters, different on every call (so the BPE's cache never helps). */
function randomWord(length: number): string {
  const codes = new Uint8Array(length);
  for (let i = 0; i < length; i += 1) {
    seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
    codes[i] = 97 + ((seed >>> 16) % 26);
  }
  return new TextDecoder().decode(codes);
}

const PROSE =
  'The quick brown fox jumps over the lazy dog.\n\nIt said: "¿Qué tal?" 12345 — 漢字 and émojis 🦊🦊.  Twice  spaced.\t';

const fastest = (runs: number, work: () => void): number => {
  let best = Number.POSITIVE_INFINITY;
  for (let run = 0; run < runs; run += 1) {
    const started = performance.now();
    work();
    best = Math.min(best, performance.now() - started);
  }
  return best;
};

describe('tokenizer', () => {
  it('should hand the BPE pieces of at most PIECE_CHARS characters that join back to the text', () => {
    for (const text of [
      randomWord(400_000),
      ' '.repeat(10_000),
      '🦊'.repeat(5_000),
      'a🦊'.repeat(3_000),
      PROSE.repeat(300),
    ]) {
      const pieces = [...textPieces(text)];
      expect(pieces.join('')).toBe(text);
      expect(Math.max(...pieces.map((piece) => piece.length))).toBeLessThanOrEqual(PIECE_CHARS);
      // No piece starts or ends inside a surrogate pair.
      for (const piece of pieces) expect(piece).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
    }
    expect([...textPieces('')]).toEqual([]);
  });

  it('should count ordinary text exactly as the library does, and encode it back to itself', () => {
    for (const text of [PROSE, PROSE.repeat(50), 'word '.repeat(2_000)]) {
      expect(countTextTokens(text)).toBe(countTokens(text, { disallowedSpecial: new Set() }));
      expect(decodeTokens(encodeText(text))).toBe(text);
    }
    expect(countTextTokens('')).toBe(0);
    expect(countTextTokens('<|endoftext|>')).toBeGreaterThan(1);
  });

  it("should load the build's copy of the vocabulary, which is the package's own", () => {
    // The run's global set-up made the build: src/tokenizer.ts reads its JSON copy rather than the package's module.
    expect(existsSync(TOKENIZER_RANKS)).toBe(true);
    const copy: unknown = JSON.parse(readFileSync(TOKENIZER_RANKS, 'utf8'));
    expect(copy).toEqual(o200kRanks);
  });

  it('should over-count a long word only slightly', () => {
    const word = randomWord(6_000);
    const exact = countTokens(word);
    const counted = countTextTokens(word);
    expect(counted).toBeGreaterThanOrEqual(exact);
    expect(counted).toBeLessThanOrEqual(exact * 1.02);
    expect(decodeTokens(encodeText(word))).toBe(word);
  });

  it('should take as long for one 100 KB word as for ten words of 10 KB (it took ten times as long)', () => {
    countTextTokens(randomWord(1_000)); // loaded and warm
    const tenWords = Array.from({ length: 5 }, () => Array.from({ length: 10 }, () => randomWord(10_000)));
    const oneWord = Array.from({ length: 5 }, () => randomWord(100_000));
    // Interleaved, so a burst of load on a shared host slows both kinds alike; the fastest of each is compared.
    let short = Infinity;
    let long = Infinity;
    for (let round = 0; round < 5; round += 1) {
      short = Math.min(
        short,
        fastest(1, () => tenWords.pop()!.forEach((word) => countTextTokens(word))),
      );
      long = Math.min(
        long,
        fastest(1, () => countTextTokens(oneWord.pop()!)),
      );
    }
    // The same amount of text: linear is 1×, quadratic was 10× (100 KB took ~6 s). Generous for a busy machine.
    expect(long / short).toBeLessThan(5);
  });

  it('should count long texts off the event loop with the same result, and in slices on it', async () => {
    const texts = [randomWord(50_000), PROSE.repeat(100)];
    const expected = texts.reduce((sum, text) => sum + countTextTokens(text), 0);
    expect(await countTexts(texts)).toBe(expected);
    expect(await countTexts(['short', 'texts'])).toBe(countTextTokens('short') + countTextTokens('texts'));
    const counter = new TokenCounter();
    expect((await counter.count(texts[0]!)) + (await counter.count(texts[1]!))).toBe(expected);
  });
});
