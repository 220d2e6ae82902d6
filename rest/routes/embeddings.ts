import { z } from 'zod';
import { EmbeddingInput } from '../../src/embeddings/embedding.inputs.ts';
import type { EmbeddingList } from '../../src/embeddings/embedding.service.ts';
import { Base64Bytes, FloatsJson } from '../../src/providers/embeddings/embedding-engine.ts';
import { compressJson } from '../compression.ts';
import { balanceHeaders } from '../http.ts';
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

/** The answer's JSON, keys in OpenAI's order; vectors still in the upstream's bytes are spliced in as they came. */
function listJson(list: EmbeddingList): Buffer {
  const parts: (string | Buffer)[] = ['{"object":"list","data":['];
  list.data.forEach(({ embedding, index }, position) => {
    const vector =
      embedding instanceof Base64Bytes
        ? ['"', embedding.ascii, '"']
        : embedding instanceof FloatsJson
          ? [embedding.ascii]
          : [JSON.stringify(embedding)];
    parts.push(`${position === 0 ? '' : ','}{"object":"embedding","embedding":`, ...vector, `,"index":${index}}`);
  });
  parts.push(`],"model":${JSON.stringify(list.model)},"usage":${JSON.stringify(list.usage)}}`);
  return splicedJson(parts);
}

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
      const outcome = await call.services.embeddings.create(call.auth, await call.json(), { signal: call.signal });
      const headers = {
        ...balanceHeaders(outcome.charge),
        ...(outcome.simulated && { 'x-lagoon-simulated': 'feature-hashing' }),
      };
      const answer = await compressJson(listJson(outcome.list), call.headers['accept-encoding'], headers);
      return { status: 200, ...answer };
    },
  },
];
