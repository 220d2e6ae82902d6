import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { TEXT_PARSER_MAX_FILE_BYTES } from '../src/augment/text-parser.service.ts';

/** The largest GraphQL multipart (upload) body: a parseDocument file at its limit plus room for the other parts. */
export const GRAPHQL_MAX_UPLOAD_BODY_BYTES = TEXT_PARSER_MAX_FILE_BYTES + 1_048_576;
/** Any other GraphQL request body (Yoga's own default). */
export const GRAPHQL_MAX_BODY_BYTES = 25_000_000;

/** How much of a refused body is still read, and thrown away, after the refusal (see discardRest). */
const DISCARD_LIMIT_BYTES = 64 * 1_048_576;

const MULTIPART = /^multipart\/form-data\b/i;

const tooLarge = (limit: number) =>
  createGraphQLError(`Request body exceeds the limit of ${limit} bytes.`, { extensions: { code: 'PAYLOAD_TOO_LARGE', http: { status: 413 } } });

/**
 * The request body limit of /graphql, in place of Yoga's `maxRequestBodySize` (turn that off): a declared
 * Content-Length over the limit is refused unread, a chunked body the moment it passes the limit, both as 413
 * PAYLOAD_TOO_LARGE. Yoga's own limit reports an oversized chunked multipart body as a 400 "invalid multipart
 * data" and abandons the connection mid-body, which leaves a keep-alive client waiting forever.
 */
export function useBodyLimit(limits = { upload: GRAPHQL_MAX_UPLOAD_BODY_BYTES, other: GRAPHQL_MAX_BODY_BYTES }): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      if (!requestParser || request.method === 'GET' || request.method === 'HEAD') return;
      const limit = MULTIPART.test(request.headers.get('content-type') ?? '') ? limits.upload : limits.other;
      const declared = Number(request.headers.get('content-length') ?? Number.NaN);
      if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
      const parse = requestParser;
      setRequestParser(async (incoming) => {
        if (!incoming.body) return parse(incoming);
        const body = await readLimited(incoming.body, limit);
        return parse(new fetchAPI.Request(incoming.url, { method: incoming.method, headers: incoming.headers, body }));
      });
    },
  };
}

async function readLimited(stream: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array<ArrayBuffer>> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      void discardRest(reader);
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/**
 * Reads and drops the rest of a refused body in the background (bounded) while the 413 goes out: a client still
 * sending can then read it instead of failing on a closed socket, and its keep-alive connection stays usable.
 */
async function discardRest(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  let discarded = 0;
  try {
    while (discarded <= DISCARD_LIMIT_BYTES) {
      const { done, value } = await reader.read();
      if (done) return;
      discarded += value.byteLength;
    }
    await reader.cancel();
  } catch {
    // The client went away: nothing left to read.
  }
}
