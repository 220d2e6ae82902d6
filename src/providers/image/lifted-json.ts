/*
 * An image server's JSON answer carries its pictures as base64 strings of megabytes. Parsing them into a JSON
 * object builds a UTF-8 string of the whole answer and a second copy of each picture, and costs a few ms of the
 * event loop per megapixel (bench/RESULTS.md). Here the long string literals are cut out of the answer's bytes
 * first (base64 has no quote or backslash, so each one's end is one memchr away), the small rest is parsed, and
 * each cut string stays a view on the received bytes, from which its picture is decoded and, when it passes
 * through unchanged, answered again without being encoded twice.
 */

/** Literals at least this long are lifted out; smaller ones stay in the parsed value. */
const LIFT_MIN_BYTES = 64 * 1024;
/** What a lifted literal reads as in the parsed value: a NUL no real answer's text would start with. */
const PLACEHOLDER_PREFIX = '\u0000lifted:';
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export class LiftedJson {
  constructor(
    readonly value: unknown,
    private readonly lifted: readonly Buffer[],
  ) {}

  /** The bytes a string of the value stands for: a lifted literal's own bytes, else the string's text. */
  bytesOf(text: string): Buffer {
    if (text.startsWith(PLACEHOLDER_PREFIX)) {
      const bytes = this.lifted[Number(text.slice(PLACEHOLDER_PREFIX.length))];
      if (bytes) return bytes;
    }
    return Buffer.from(text, 'utf8');
  }
}

/** The answer parsed with its long literals lifted out; undefined when it is not JSON. */
export function parseLifted(body: Buffer, minBytes = LIFT_MIN_BYTES): LiftedJson | undefined {
  const parts: Buffer[] = [];
  const lifted: Buffer[] = [];
  let copiedTo = 0;
  let nextBackslash = body.indexOf(BACKSLASH);
  for (let at = body.indexOf(QUOTE); at !== -1;) {
    // `at` opens a string literal: its end is the next quote with no backslash in the way.
    let end = body.indexOf(QUOTE, at + 1);
    if (end === -1) return undefined;
    let escaped = false;
    while (nextBackslash !== -1 && nextBackslash < end) {
      escaped = true;
      if (body[nextBackslash + 1] === QUOTE && nextBackslash + 1 === end) end = body.indexOf(QUOTE, end + 1);
      if (end === -1) return undefined;
      nextBackslash = body.indexOf(BACKSLASH, nextBackslash + 2);
    }
    if (!escaped && end - at - 1 >= minBytes) {
      parts.push(body.subarray(copiedTo, at), Buffer.from(JSON.stringify(`${PLACEHOLDER_PREFIX}${lifted.length}`)));
      lifted.push(body.subarray(at + 1, end));
      copiedTo = end + 1;
    }
    at = body.indexOf(QUOTE, end + 1);
  }
  parts.push(body.subarray(copiedTo));
  try {
    return new LiftedJson(JSON.parse(Buffer.concat(parts).toString('utf8')), lifted);
  } catch {
    return undefined;
  }
}
