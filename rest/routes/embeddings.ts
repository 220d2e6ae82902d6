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
import { splicedJson } from '../spliced-json.ts';

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

/** An item's opening, `{"object":"embedding","embedding":`, with or without a comma before it and a quote after it. */
const ITEM_OPENINGS = ['', ','].map((comma) =>
  ['', '"'].map((quote) => Buffer.from(`${comma}{"object":"embedding","embedding":${quote}`)),
);

/**
 * Items as JSON, keys in OpenAI's order; vectors still in the upstream's bytes are spliced in as they came, between
 * constant bytes, so that an item costs one short string (its index).
 */
function itemParts(items: readonly EmbeddingItem[], first: boolean, parts: (string | Buffer)[]): void {
  items.forEach(({ embedding, index }, position) => {
    const openings = ITEM_OPENINGS[first && position === 0 ? 0 : 1]!;
    if (embedding instanceof Base64Bytes) parts.push(openings[1]!, embedding.ascii, `","index":${index}}`);
    else
      parts.push(
        openings[0]!,
        embedding instanceof FloatsJson ? embedding.ascii : JSON.stringify(embedding),
        `,"index":${index}}`,
      );
  });
}

function listJson(list: EmbeddingList): Buffer {
  const parts: (string | Buffer)[] = [LIST_OPENING];
  itemParts(list.data, true, parts);
  parts.push(listClosing(list.model, list.usage));
  return splicedJson(parts);
}

/**
 * A streamed answer: vectors are written once 192 KB of them wait (and the rest with the model and usage, once
 * charged). A JSON client reads nothing before the end, so what counts is that the answer's last bytes follow the
 * upstream's closely; fewer, larger writes cost less than one per read (bench/RESULTS.md).
 */
async function* listStream(outcome: EmbeddingStreamOutcome): AsyncGenerator<Buffer> {
  let first = true;
  let parts: (string | Buffer)[] = [LIST_OPENING];
  let waiting = 0;
  for await (const part of outcome.parts) {
    if ('items' in part) {
      itemParts(part.items, first, parts);
      first = false;
      for (const { embedding } of part.items) waiting += approximateBytes(embedding);
      if (waiting < WRITE_BYTES) continue;
    } else parts.push(listClosing(outcome.model, part.usage));
    yield splicedJson(parts);
    parts = [];
    waiting = 0;
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
