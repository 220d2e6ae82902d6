import { isAscii } from 'node:buffer';
import { brokenError } from '../upstream-errors.ts';
import { Base64Bytes, FloatsJson, type EngineVector, type IndexedVector } from './embedding-engine.ts';

/*
 * An OpenAI embeddings answer (`{"object":"list","data":[{…},…],"model":…,"usage":{…}}`, members in any order) read
 * as its bytes arrive, so that Lagoon can pass each vector on before the rest of the answer has come. Strings are
 * skipped a memchr at a time and flat arrays (float vectors) one bracket to the next, so a 350 KB answer costs a few
 * hundred small steps, not a step per byte. Each vector stays a view on the received bytes (Base64Bytes,
 * FloatsJson), or the parsed string when it had escapes. Anything that is not such an answer is the upstream's
 * fault: brokenError (502).
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const STARTS_WITH_NUMBER = /^\[\s*-?\d/;
/** Bytes beyond the last entry's size taken from the next read to complete a value cut between reads. */
const BRIDGE_SLACK_BYTES = 4096;
/** A value up to this long is looked for again with every read; a longer one as its bytes double. */
const RESCAN_BYTES = 1024 * 1024;

type Phase = 'open' | 'firstMember' | 'member' | 'afterMember' | 'dataOpen' | 'firstItem' | 'item' | 'afterItem';

/** Strings up to this long (member names, numbers' neighbours) are scanned in JavaScript, not with a native call. */
const SHORT_STRING_BYTES = 48;

/** Whether the quote at `quote` ends its string: an even run of backslashes before it escapes itself, not the quote. */
function closes(bytes: Buffer, quote: number): boolean {
  let slash = quote - 1;
  while (bytes[slash] === BACKSLASH) slash -= 1;
  return (quote - 1 - slash) % 2 === 0;
}

/** Where a JSON string that opens at `at` ends (past its closing quote), or -1 when its end has not arrived. */
function stringEnd(bytes: Buffer, at: number): number {
  const near = Math.min(bytes.length, at + SHORT_STRING_BYTES);
  for (let quote = at + 1; quote < near; quote += 1)
    if (bytes[quote] === QUOTE && closes(bytes, quote)) return quote + 1;
  for (let quote = bytes.indexOf(QUOTE, near); quote !== -1; quote = bytes.indexOf(QUOTE, quote + 1))
    if (closes(bytes, quote)) return quote + 1;
  return -1;
}

const isSpace = (byte: number | undefined) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

/** The first position from `at` that is not JSON whitespace. */
function afterSpace(bytes: Buffer, at: number): number {
  while (isSpace(bytes[at])) at += 1;
  return at;
}

/** Where the JSON value that opens at `at` ends, or -1 when its end has not arrived. Its syntax is checked later. */
function valueEnd(bytes: Buffer, at: number): number {
  const first = bytes[at];
  if (first === QUOTE) return stringEnd(bytes, at);
  if (first !== OPEN_BRACKET && first !== OPEN_BRACE) {
    // A number or literal: it ends where the structure goes on.
    for (let end = at; end < bytes.length; end += 1) {
      const byte = bytes[end];
      if (byte === COMMA || byte === CLOSE_BRACE || byte === CLOSE_BRACKET || isSpace(byte)) return end;
    }
    return -1;
  }
  let depth = 0;
  for (let end = at; end < bytes.length;) {
    const byte = bytes[end]!;
    if (byte === QUOTE) {
      end = stringEnd(bytes, end);
      if (end === -1) return -1;
      continue;
    }
    if (byte === OPEN_BRACKET) {
      // A flat array (numbers) is skipped to its bracket at once.
      const close = bytes.indexOf(CLOSE_BRACKET, end + 1);
      if (close === -1) return -1;
      const inner = bytes.subarray(end + 1, close);
      if (inner.indexOf(OPEN_BRACKET) === -1 && inner.indexOf(OPEN_BRACE) === -1 && inner.indexOf(QUOTE) === -1) {
        end = close + 1;
        if (depth === 0) return end;
        continue;
      }
      depth += 1;
    } else if (byte === OPEN_BRACE) depth += 1;
    else if (byte === CLOSE_BRACKET || byte === CLOSE_BRACE) {
      depth -= 1;
      if (depth === 0) return end + 1;
    }
    end += 1;
  }
  return -1;
}

/** The member names the reader acts on; any other member is skipped. */
const NAMES = ['data', 'usage', 'embedding', 'index'] as const;
type Name = (typeof NAMES)[number];
const NAME_BYTES = NAMES.map((name) => [name, Buffer.from(name, 'latin1')] as const);

/**
 * Which of NAMES the JSON string from `from` to `to` (quotes included) is, compared byte by byte (no string is made
 * for a name); undefined for another. A name written with escapes is decoded first.
 */
function nameOf(bytes: Buffer, from: number, to: number): Name | undefined {
  const length = to - from - 2;
  let escaped = false;
  for (let at = from + 1; at < to - 1; at += 1) if (bytes[at] === BACKSLASH) escaped = true;
  if (escaped) {
    const name = JSON.parse(bytes.toString('utf8', from, to)) as string;
    return NAMES.find((known) => known === name);
  }
  for (const [name, ascii] of NAME_BYTES) {
    if (ascii.length !== length) continue;
    let at = 0;
    while (at < length && bytes[from + 1 + at] === ascii[at]) at += 1;
    if (at === length) return name;
  }
  return undefined;
}

const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

/** The JSON number from `from` to `to`: digits are read in place; another form (1.0, 1e0, -1) through Number. */
function numberAt(bytes: Buffer, from: number, to: number): number {
  if (to === from) return Number.NaN;
  const other = () => Number(bytes.toString('latin1', from, to));
  // Beyond 15 digits a double may not hold the integer exactly.
  if (to - from > 15) return other();
  let value = 0;
  for (let at = from; at < to; at += 1) {
    const byte = bytes[at]!;
    if (byte < DIGIT_0 || byte > DIGIT_9) return other();
    value = value * 10 + (byte - DIGIT_0);
  }
  return value;
}

export class EmbeddingAnswerReader {
  private bytes: Buffer = Buffer.alloc(0);
  private at = 0;
  /** Bytes that came while a value waited for its end. */
  private pieces: Buffer[] = [];
  private waiting = 0;
  private phase: Phase = 'open';
  /** A long value whose end had not arrived is looked for again once this many bytes wait (no rescans of n²). */
  private retryAt = 0;
  private finished = false;
  /** The size of the last vector entry read: about what a cut one needs from the next read. */
  private itemBytes = 0;
  private sawData = false;
  private position = 0;
  private nextIndex = 0;
  private readonly early = new Map<number, EngineVector>();
  private tokens: number | undefined;

  /** `count`: how many vectors the answer must hold (one per input). */
  constructor(private readonly count: number) {}

  /** The upstream's prompt token count, once the answer has ended (undefined when it reported none). */
  get promptTokens(): number | undefined {
    return this.tokens;
  }

  /** Takes the next bytes of the answer; returns the vectors now complete, in input order. */
  push(chunk: Buffer): IndexedVector[] {
    this.pieces.push(chunk);
    this.waiting += chunk.length;
    const out: IndexedVector[] = [];
    if (this.waiting >= this.retryAt) this.advance(out, false);
    return out;
  }

  /** The answer has ended: the last vectors, after checking that it was whole. */
  end(): IndexedVector[] {
    const out: IndexedVector[] = [];
    this.advance(out, true);
    if (!this.finished) throw brokenError('sent an embeddings answer that ended early');
    for (let at = this.at; at < this.bytes.length; at += 1)
      if (!isSpace(this.bytes[at])) throw brokenError('sent more after its embeddings answer');
    if (!this.sawData) throw brokenError('sent an embeddings answer of the wrong shape');
    if (this.nextIndex !== this.count) throw brokenError(`sent ${this.position} vectors for ${this.count} inputs`);
    return out;
  }

  private advance(out: IndexedVector[], last: boolean): void {
    const rest = this.bytes.subarray(this.at);
    const pieces = this.pieces;
    this.pieces = [];
    this.waiting = 0;
    this.retryAt = 0;
    if (pieces.length === 0) return this.parse(this.bytes, this.at, out, last);
    if (rest.length === 0 && pieces.length === 1) return this.parse(pieces[0]!, 0, out, last);
    const piece = pieces[0]!;
    const head = Math.min(piece.length, this.itemBytes + BRIDGE_SLACK_BYTES);
    if (pieces.length === 1 && head < piece.length) {
      // The value cut between two reads is joined from the bytes it needs (about one vector), and the rest of the read
      // is parsed where it lies: no copy of every read.
      this.parse(Buffer.concat([rest, piece.subarray(0, head)]), 0, out, false);
      if (this.at >= rest.length) return this.parse(piece, this.at - rest.length, out, last);
      // A value longer than the join: joined whole.
      return this.parse(Buffer.concat([this.bytes.subarray(this.at), piece.subarray(head)]), 0, out, last);
    }
    this.parse(Buffer.concat([rest, ...pieces]), 0, out, last);
  }

  /** Reads what `bytes` holds from `at` on; what is cut at its end waits for the next bytes (at the end: fails). */
  private parse(bytes: Buffer, at: number, out: IndexedVector[], last: boolean): void {
    this.bytes = bytes;
    this.at = at;
    while (!this.finished) {
      this.at = afterSpace(bytes, this.at);
      if (this.at >= bytes.length) return;
      const byte = bytes[this.at]!;
      switch (this.phase) {
        case 'open':
          if (byte !== OPEN_BRACE) throw brokenError('sent an embeddings answer that is not a JSON object');
          this.at += 1;
          this.phase = 'firstMember';
          break;
        case 'firstMember':
        case 'member': {
          if (byte === CLOSE_BRACE && this.phase === 'firstMember') {
            this.at += 1;
            this.finished = true;
            break;
          }
          if (byte !== QUOTE) throw brokenError('sent an embeddings answer that is not JSON');
          // A member is taken whole (the list of vectors up to its bracket), or left for when more has come.
          const keyEnd = stringEnd(bytes, this.at);
          const colon = keyEnd === -1 ? -1 : afterSpace(bytes, keyEnd);
          if (keyEnd === -1 || colon >= bytes.length) return this.wait(last);
          if (bytes[colon] !== COLON) throw brokenError('sent an embeddings answer that is not JSON');
          const key = nameOf(bytes, this.at, keyEnd);
          const valueAt = afterSpace(bytes, colon + 1);
          if (key === 'data') {
            if (this.sawData) throw brokenError('sent two lists of vectors');
            this.sawData = true;
            this.at = valueAt;
            this.phase = 'dataOpen';
            break;
          }
          const end = valueAt < bytes.length ? valueEnd(bytes, valueAt) : -1;
          if (end === -1) return this.wait(last);
          if (key === 'usage') this.readUsage(bytes, valueAt, end);
          this.at = end;
          this.phase = 'afterMember';
          break;
        }
        case 'afterMember':
          this.at += 1;
          if (byte === COMMA) this.phase = 'member';
          else if (byte === CLOSE_BRACE) this.finished = true;
          else throw brokenError('sent an embeddings answer that is not JSON');
          break;
        case 'dataOpen':
          if (byte !== OPEN_BRACKET) throw brokenError('sent an embeddings answer of the wrong shape');
          this.at += 1;
          this.phase = 'firstItem';
          break;
        case 'firstItem':
        case 'item': {
          if (byte === CLOSE_BRACKET && this.phase === 'firstItem') {
            this.at += 1;
            this.phase = 'afterMember';
            break;
          }
          if (byte !== OPEN_BRACE) throw brokenError('sent a vector entry that is not an object');
          const end = valueEnd(bytes, this.at);
          if (end === -1) return this.wait(last);
          this.readItem(bytes, this.at, end, out);
          this.itemBytes = end - this.at;
          this.at = end;
          this.phase = 'afterItem';
          break;
        }
        case 'afterItem':
          this.at += 1;
          if (byte === COMMA) this.phase = 'item';
          else if (byte === CLOSE_BRACKET) this.phase = 'afterMember';
          else throw brokenError('sent an embeddings answer that is not JSON');
          break;
      }
    }
  }

  /**
   * Nothing more can be read until more bytes come: try again with the next bytes, or, for a value past 1 MiB, once
   * twice as many wait (each try reads the value again from its start); at the end, fail.
   */
  private wait(last: boolean): void {
    if (last) throw brokenError('sent an embeddings answer that ended early');
    this.waiting = this.bytes.length - this.at;
    this.retryAt = this.waiting <= RESCAN_BYTES ? 0 : 2 * this.waiting;
  }

  private readUsage(bytes: Buffer, from: number, to: number): void {
    let usage: unknown;
    try {
      usage = JSON.parse(bytes.toString('utf8', from, to));
    } catch {
      throw brokenError('sent an embeddings answer that is not JSON');
    }
    const tokens = (usage as { prompt_tokens?: unknown } | null)?.prompt_tokens;
    this.tokens = typeof tokens === 'number' && Number.isInteger(tokens) && tokens >= 0 ? tokens : undefined;
  }

  /** One `{"object":"embedding","embedding":…,"index":n}` (members in any order), passed on in input order. */
  private readItem(bytes: Buffer, from: number, to: number, out: IndexedVector[]): void {
    let index: unknown = this.position;
    let vector: EngineVector | undefined;
    let at = afterSpace(bytes, from + 1);
    if (bytes[at] === CLOSE_BRACE) at = to;
    while (at < to - 1) {
      if (bytes[at] !== QUOTE) throw brokenError('sent a vector entry that is not JSON');
      const keyEnd = stringEnd(bytes, at);
      const key = nameOf(bytes, at, keyEnd);
      at = keyEnd;
      at = afterSpace(bytes, at);
      if (bytes[at] !== COLON) throw brokenError('sent a vector entry that is not JSON');
      at += 1;
      at = afterSpace(bytes, at);
      const end = valueEnd(bytes, at);
      if (end === -1 || end > to - 1) throw brokenError('sent a vector entry that is not JSON');
      if (key === 'embedding') vector = vectorOf(bytes, at, end);
      else if (key === 'index') index = numberAt(bytes, at, end);
      at = end;
      at = afterSpace(bytes, at);
      if (bytes[at] === COMMA) {
        at += 1;
        at = afterSpace(bytes, at);
      } else if (at !== to - 1) throw brokenError('sent a vector entry that is not JSON');
    }
    this.position += 1;
    if (vector === undefined) throw brokenError('sent a vector that is neither numbers nor base64');
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= this.count)
      throw brokenError(
        this.position > this.count
          ? `sent more vectors than the ${this.count} inputs`
          : 'sent vectors with bad indexes',
      );
    if (index < this.nextIndex || this.early.has(index)) throw brokenError('sent vectors with bad indexes');
    if (index !== this.nextIndex) {
      this.early.set(index, vector);
      return;
    }
    out.push({ index, vector });
    this.nextIndex += 1;
    for (let held = this.early.get(this.nextIndex); held !== undefined; held = this.early.get(this.nextIndex)) {
      this.early.delete(this.nextIndex);
      out.push({ index: this.nextIndex, vector: held });
      this.nextIndex += 1;
    }
  }
}

/**
 * A vector as its bytes: base64 text (ASCII, of a base64 length) or a flat array of numbers, which Lagoon's answer
 * carries unparsed; a string with escapes is parsed. That each character is in the alphabet, or each number well
 * formed, is the upstream's word, as it is for a base64 string that was parsed.
 */
function vectorOf(bytes: Buffer, from: number, to: number): EngineVector {
  if (bytes[from] === QUOTE) {
    const text = bytes.subarray(from + 1, to - 1);
    if (text.indexOf(BACKSLASH) !== -1) return JSON.parse(bytes.toString('utf8', from, to)) as string;
    if (isAscii(text) && text.length % 4 === 0 && text.length > 0) return new Base64Bytes(text);
  } else if (bytes[from] === OPEN_BRACKET) {
    const json = bytes.subarray(from, to);
    if (
      isAscii(json) &&
      STARTS_WITH_NUMBER.test(json.toString('latin1', 0, 32)) &&
      json[json.length - 1] === CLOSE_BRACKET
    )
      return new FloatsJson(json);
  }
  throw brokenError('sent a vector that is neither numbers nor base64');
}
