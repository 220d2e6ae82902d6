/*
 * An image server's JSON answer carries its pictures as base64 strings of megabytes, an embedding server's its
 * vectors as base64 strings of kilobytes. Parsing them into a JSON object builds a UTF-8 string of the whole answer
 * and a second copy of each literal, and costs a few ms of the event loop per megapixel or per batch
 * (bench/RESULTS.md). Here the long string literals are cut out of the answer's bytes first (base64 has no quote or
 * backslash, so each one's end is one memchr away), the small rest is parsed, and each cut string stays a view on
 * the received bytes, which Lagoon's own answer can carry again without a string ever being made of them. Long
 * flat arrays (float vectors) can be lifted the same way, as their JSON text.
 */

/** Literals at least this long are lifted out; smaller ones stay in the parsed value. */
const LIFT_MIN_BYTES = 64 * 1024;
/** What a lifted literal reads as in the parsed value: a NUL no real answer's text would start with. */
const PLACEHOLDER_PREFIX = '\u0000lifted:';
/** How a placeholder opens in JSON text (the NUL escaped). */
const PLACEHOLDER_JSON = JSON.stringify(PLACEHOLDER_PREFIX).slice(0, -1);
const QUOTE = 0x22;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const BACKSLASH = 0x5c;

interface Lifted {
  readonly bytes: Buffer;
  /** A flat array (`[…]`, its brackets included), else a string literal's text between its quotes. */
  readonly array: boolean;
}

export class LiftedJson {
  constructor(
    readonly value: unknown,
    private readonly lifted: readonly Lifted[],
  ) {}

  /** How many literals and arrays were lifted out. */
  get liftedCount(): number {
    return this.lifted.length;
  }

  /** The bytes a string of the value stands for: a lifted literal's own bytes, else the string's text. */
  bytesOf(text: string): Buffer {
    return this.liftedBytes(text) ?? Buffer.from(text, 'utf8');
  }

  /** A lifted literal's bytes (between its quotes, no escapes); undefined for a string that was parsed. */
  liftedBytes(text: string): Buffer | undefined {
    const entry = this.entry(text);
    return entry && !entry.array ? entry.bytes : undefined;
  }

  /** A lifted flat array's JSON text (`[…]`), which the parsed value holds as a placeholder string. */
  liftedArray(text: string): Buffer | undefined {
    const entry = this.entry(text);
    return entry?.array ? entry.bytes : undefined;
  }

  private entry(text: string): Lifted | undefined {
    if (!text.startsWith(PLACEHOLDER_PREFIX)) return undefined;
    return this.lifted[Number(text.slice(PLACEHOLDER_PREFIX.length))];
  }
}

/**
 * The answer parsed with its long literals lifted out; undefined when it is not JSON. With `arrays`, long flat
 * arrays (numbers: no string, array or object inside) are lifted too, as a placeholder string in the value.
 */
export function parseLifted(
  body: Buffer,
  minBytes = LIFT_MIN_BYTES,
  options: { readonly arrays?: boolean } = {},
): LiftedJson | undefined {
  // The rest is built as text (each gap decoded once), not as bytes to concatenate and decode again.
  let rest = '';
  const lifted: Lifted[] = [];
  let copiedTo = 0;
  const lift = (from: number, to: number, array: boolean) => {
    rest += `${body.toString('utf8', copiedTo, from)}${PLACEHOLDER_JSON}${lifted.length}"`;
    lifted.push({ bytes: array ? body.subarray(from, to) : body.subarray(from + 1, to - 1), array });
    copiedTo = to;
  };
  // Between two string literals there is only structure: a long stretch of it holds a long array.
  const liftArrays = (from: number, to: number) => {
    for (let open = body.indexOf(OPEN_BRACKET, from); open !== -1 && open < to;) {
      const close = body.indexOf(CLOSE_BRACKET, open + 1);
      if (close === -1 || close >= to) return;
      const inner = body.subarray(open + 1, close);
      const flat = inner.indexOf(OPEN_BRACKET) === -1 && inner.indexOf(OPEN_BRACE) === -1;
      if (flat && close - open + 1 >= minBytes) lift(open, close + 1, true);
      open = body.indexOf(OPEN_BRACKET, flat ? close + 1 : open + 1);
    }
  };
  let structureFrom = 0;
  let nextBackslash = body.indexOf(BACKSLASH);
  for (let at = body.indexOf(QUOTE); at !== -1;) {
    if (options.arrays && at - structureFrom >= minBytes) liftArrays(structureFrom, at);
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
    if (!escaped && end - at - 1 >= minBytes) lift(at, end + 1, false);
    structureFrom = end + 1;
    at = body.indexOf(QUOTE, end + 1);
  }
  if (options.arrays && body.length - structureFrom >= minBytes) liftArrays(structureFrom, body.length);
  rest += body.toString('utf8', copiedTo);
  try {
    return new LiftedJson(JSON.parse(rest), lifted);
  } catch {
    return undefined;
  }
}
