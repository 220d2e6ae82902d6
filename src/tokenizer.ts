import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setImmediate as toEventLoop } from 'node:timers/promises';
import type * as GptEncodingModule from 'gpt-tokenizer/GptEncoding';
import { TOKENIZER_RANKS } from './runtime-files.ts';

/*
 * The one tokenizer Lagoon counts with: OpenAI's o200k_base (GPT-4o and later), from gpt-tokenizer. Text from
 * users and documents may contain special-token lookalikes ("<|endoftext|>"); they are ordinary text here (the
 * library throws on them by default).
 *
 * Its vocabulary takes ~40 MB of memory and a few hundred milliseconds to load, so it is loaded on the first count
 * rather than at start: a process that never counts (a server without chat traffic yet, an operator CLI command)
 * does without it.
 *
 * BPE merges within one pre-token (a word, a run of punctuation or of spaces) cost time quadratic in its length:
 * 100 KB without whitespace took ~6 s, 900 KB minutes. So text is encoded in pieces of at most PIECE_CHARS, cut
 * where a whitespace run starts (where the pre-tokenizer cuts anyway: ordinary text counts exactly as before) or,
 * inside a longer run, every PIECE_CHARS. A cut inside a run only loses merges across it, so the count is then a
 * slight over-estimate (+0.1–0.2 % on random letters), and the work is linear in the text's length.
 */

type Encoding = Pick<GptEncodingModule.GptEncoding, 'countTokens' | 'encode' | 'decode'>;
type Ranks = ReturnType<Parameters<typeof GptEncodingModule.GptEncoding.getEncodingApi>[1]>;

const require = createRequire(import.meta.url);
let o200k: Encoding | undefined;
const tokenizer = (): Encoding => (o200k ??= loadO200k());

/** The vocabulary from the build's JSON copy when there is one (four times faster to load), else the package's module. */
function loadO200k(): Encoding {
  let ranks: Ranks;
  try {
    ranks = JSON.parse(readFileSync(TOKENIZER_RANKS, 'utf8')) as Ranks;
  } catch {
    return require('gpt-tokenizer/encoding/o200k_base') as Encoding;
  }
  const { GptEncoding } = require('gpt-tokenizer/GptEncoding') as typeof GptEncodingModule;
  return GptEncoding.getEncodingApi('o200k_base', () => ranks);
}

const ORDINARY = { disallowedSpecial: new Set<string>() };

/** The longest text handed to the BPE at once. */
export const PIECE_CHARS = 256;
/** How long a yielding count works before it lets the event loop run (other requests, health checks, signals). */
const SLICE_MS = 5;

const WHITESPACE = /\s/;
const isSpace = (text: string, index: number): boolean => WHITESPACE.test(text.charAt(index));
const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;

/** The text in pieces of at most PIECE_CHARS characters, joined back they are the text; never cut inside a surrogate pair. */
export function* textPieces(text: string): Generator<string> {
  let start = 0;
  while (text.length - start > PIECE_CHARS) {
    let cut = start + PIECE_CHARS;
    // Prefer the start of a whitespace run in the window's second half.
    const floor = start + PIECE_CHARS / 2;
    let at = cut;
    while (at > floor && !(isSpace(text, at) && !isSpace(text, at - 1))) at -= 1;
    if (at > floor) cut = at;
    else if (isHighSurrogate(text.charCodeAt(cut - 1))) cut -= 1;
    yield text.slice(start, cut);
    start = cut;
  }
  if (start < text.length) yield text.slice(start);
}

const countPiece = (piece: string): number => tokenizer().countTokens(piece, ORDINARY);

/** Tokens of `text`, in linear time. Runs on the caller's thread: for long texts on a server use `TokenCounter`. */
export function countTextTokens(text: string): number {
  let tokens = 0;
  for (const piece of textPieces(text)) tokens += countPiece(piece);
  return tokens;
}

/** The tokens of `text` (pieces encoded one by one; decoding them gives the text back). */
export function encodeText(text: string): number[] {
  const tokens: number[] = [];
  for (const piece of textPieces(text)) for (const token of tokenizer().encode(piece, ORDINARY)) tokens.push(token);
  return tokens;
}

export const decodeTokens = (tokens: readonly number[]): string => tokenizer().decode(tokens);

/**
 * Counts like `countTextTokens` but lets the event loop run every few milliseconds of work, so other requests
 * and signals are served while a long text is counted on the main thread (when the counting thread of
 * src/token-count-pool.ts is not available). One counter per request: its slice spans every text it counts.
 */
export class TokenCounter {
  private sliceStart = performance.now();

  async count(text: string): Promise<number> {
    let tokens = 0;
    for (const piece of textPieces(text)) {
      tokens += countPiece(piece);
      if (performance.now() - this.sliceStart >= SLICE_MS) {
        await toEventLoop();
        this.sliceStart = performance.now();
      }
    }
    return tokens;
  }
}

/**
 * The longest start of `text` with at most `budget` tokens, and its token count: for cutting an answer at
 * max_completion_tokens. Encodes only as far as the budget reaches.
 */
export function takeTokens(text: string, budget: number): { text: string; tokens: number; cut: boolean } {
  let tokens = 0;
  let taken = 0;
  for (const piece of textPieces(text)) {
    const encoded = tokenizer().encode(piece, ORDINARY);
    if (tokens + encoded.length > budget) {
      // A token may end inside a multi-byte character: that half is dropped, the token still counts.
      const kept = tokenizer()
        .decode(encoded.slice(0, budget - tokens))
        .replace(/\uFFFD+$/, '');
      return { text: text.slice(0, taken) + kept, tokens: budget, cut: true };
    }
    tokens += encoded.length;
    taken += piece.length;
  }
  return { text, tokens, cut: false };
}
