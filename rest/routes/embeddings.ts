import { z } from 'zod';
import { EmbeddingInput } from '../../src/embeddings/embedding.inputs.ts';
import type {
  EmbeddingItem,
  EmbeddingList,
  EmbeddingOutcome,
  EmbeddingStreamOutcome,
  EmbeddingTokens,
} from '../../src/embeddings/embedding.service.ts';
import { Base64Bytes, FloatsJson } from '../../src/providers/embeddings/embedding-engine.ts';
import { chooseCoding, compressJson, compressStream } from '../compression.ts';
import { balanceHeaders, JSON_TYPE_HEADER, type Reply } from '../http.ts';
import type { Route } from '../router.ts';

/* POST /embeddings (docs/api.md, Embeddings): OpenAI's request and answer shapes. */

const EmbeddingListWire = z.object({
  object: z.literal('list'),
  data: z.array(
    z.object({
      object: z.literal('embedding'),
      embedding: z
        .union([z.array(z.number()), z.string()])
        .describe('Numbers, or with encoding_format=base64 the little-endian float32 bytes in base64'),
      index: z.number().int(),
    }),
  ),
  model: z.string().describe('The model id that answered'),
  usage: z.object({ prompt_tokens: z.number().int(), total_tokens: z.number().int() }).describe('As billed'),
});

/**
 * A relayed answer may wait this far ahead of a slow client (Envoy's default buffer per connection): 64 vectors of
 * 1,024 dimensions in base64 are ~350 KB, so the upstream's answer is read at its own pace, not the client's.
 */
const writeAheadBytes = 1024 * 1024;

const LIST_OPENING = '{"object":"list","data":[';
const listClosing = (model: string, usage: EmbeddingTokens) =>
  `],"model":${JSON.stringify(model)},"usage":${JSON.stringify(usage)}}`;

const ITEM_OPENING = Buffer.from('{"object":"embedding","embedding":', 'latin1');
const INDEX_MEMBER = Buffer.from(',"index":', 'latin1');
const COMMA = 0x2c;
const QUOTE = 0x22;
const CLOSE_BRACE = 0x7d;

/** A vector's JSON bytes: the upstream's own (quoted when base64), else serialized. */
function vectorJson(embedding: EmbeddingItem['embedding']): { readonly bytes: Buffer; readonly quoted: boolean } {
  if (embedding instanceof Base64Bytes) return { bytes: embedding.ascii, quoted: true };
  if (embedding instanceof FloatsJson) return { bytes: embedding.ascii, quoted: false };
  return { bytes: Buffer.from(JSON.stringify(embedding)), quoted: false };
}

/**
 * `before`, the items as JSON (keys in OpenAI's order), then `after`, in one buffer. Vectors still in the upstream's
 * bytes are copied in as they came; the rest is written from constant bytes, with no string made per item (this is
 * the answer's hot path: 64 items per batch).
 */
function listBytes(items: readonly EmbeddingItem[], first: boolean, before: string, after: string): Buffer {
  const vectors = items.map(({ embedding }) => vectorJson(embedding));
  let length = Buffer.byteLength(before) + Buffer.byteLength(after);
  items.forEach(({ index }, position) => {
    const { bytes, quoted } = vectors[position]!;
    length += (first && position === 0 ? 0 : 1) + ITEM_OPENING.length + bytes.length + (quoted ? 2 : 0);
    length += INDEX_MEMBER.length + digitCount(index) + 1;
  });
  const out = Buffer.allocUnsafe(length);
  let at = out.write(before, 0);
  items.forEach(({ index }, position) => {
    const { bytes, quoted } = vectors[position]!;
    if (!first || position > 0) out[at++] = COMMA;
    out.set(ITEM_OPENING, at);
    at += ITEM_OPENING.length;
    if (quoted) out[at++] = QUOTE;
    out.set(bytes, at);
    at += bytes.length;
    if (quoted) out[at++] = QUOTE;
    out.set(INDEX_MEMBER, at);
    at += INDEX_MEMBER.length;
    at = writeDigits(out, at, index);
    out[at++] = CLOSE_BRACE;
  });
  out.write(after, at);
  return out;
}

const digitCount = (value: number): number => (value < 10 ? 1 : 1 + digitCount(Math.floor(value / 10)));

/** Writes a non-negative integer's decimal digits at `at`; returns where they end. */
function writeDigits(out: Buffer, at: number, value: number): number {
  const end = at + digitCount(value);
  for (let digit = end - 1; digit >= at; digit -= 1) {
    out[digit] = 0x30 + (value % 10);
    value = Math.floor(value / 10);
  }
  return end;
}

const listJson = (list: EmbeddingList): Buffer =>
  listBytes(list.data, true, LIST_OPENING, listClosing(list.model, list.usage));

/**
 * A streamed answer: vectors are written once 192 KB of them wait (and the rest with the model and usage, once
 * charged). A JSON client reads nothing before the end, so what counts is that the answer's last bytes follow the
 * upstream's closely; fewer, larger writes cost less than one per read (bench/RESULTS.md).
 */
async function* listStream(outcome: EmbeddingStreamOutcome): AsyncGenerator<Buffer> {
  let first = true;
  let waiting: EmbeddingItem[] = [];
  let waitingBytes = 0;
  for await (const part of outcome.parts) {
    if ('items' in part) {
      waiting.push(...part.items);
      for (const { embedding } of part.items) waitingBytes += approximateBytes(embedding);
      if (waitingBytes < WRITE_BYTES) continue;
    }
    const closing = 'usage' in part ? listClosing(outcome.model, part.usage) : '';
    yield listBytes(waiting, first, first ? LIST_OPENING : '', closing);
    first = false;
    waiting = [];
    waitingBytes = 0;
  }
}

const WRITE_BYTES = 192 * 1024;

const approximateBytes = (embedding: EmbeddingItem['embedding']): number =>
  embedding instanceof Base64Bytes || embedding instanceof FloatsJson
    ? embedding.ascii.length
    : typeof embedding === 'string'
      ? embedding.length
      : embedding.length * 10;

export const embeddingRoutes: Route[] = [
  {
    method: 'POST',
    path: '/embeddings',
    access: 'account',
    doc: {
      summary:
        'Embeddings, OpenAI-compatible: a string or 1–2048 strings (token arrays → 400), float or base64 vectors, ' +
        '`dimensions` for models with supportsCustomDimensions. Billed per 1M input tokens. ' +
        '`Accept-Encoding: gzip, br` compresses the body.',
      tags: ['Embeddings'],
      body: EmbeddingInput,
      response: EmbeddingListWire,
    },
    async handler(call) {
      const acceptEncoding = call.headers['accept-encoding'];
      // A streamed answer is sent before its charge is known: a wallet caller, whose answer carries its credit left,
      // gets it whole.
      if (call.auth.kind !== 'apiKey') {
        const outcome = await call.services.embeddings.create(call.auth, await call.json(), { signal: call.signal });
        return wholeAnswer(outcome, acceptEncoding);
      }
      const outcome = await call.services.embeddings.createStreaming(call.auth, await call.json(), {
        signal: call.signal,
      });
      if (!('parts' in outcome)) return wholeAnswer(outcome, acceptEncoding);
      const coding = chooseCoding(acceptEncoding ?? null);
      const headers = { 'content-type': JSON_TYPE_HEADER, vary: 'accept-encoding' };
      if (coding === undefined) return { status: 200, headers, stream: listStream(outcome), writeAheadBytes };
      return {
        status: 200,
        headers: { ...headers, 'content-encoding': coding },
        stream: compressStream(listStream(outcome), coding),
        writeAheadBytes,
      };
    },
  },
];

async function wholeAnswer(outcome: EmbeddingOutcome, acceptEncoding: string | undefined): Promise<Reply> {
  const headers = {
    ...balanceHeaders(outcome.charge),
    ...(outcome.simulated && { 'x-lagoon-simulated': 'feature-hashing' }),
  };
  return { status: 200, ...(await compressJson(listJson(outcome.list), acceptEncoding, headers)) };
}
