import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { TEXT_PARSER_MAX_FILE_BYTES } from '../src/augment/text-parser.service.ts';
import { DISCARD_LIMIT_BYTES, readAllLimited } from '../src/byte-stream.ts';

/** The largest GraphQL multipart (upload) body: a parseDocument file at its limit plus room for the other parts. */
export const GRAPHQL_MAX_UPLOAD_BODY_BYTES = TEXT_PARSER_MAX_FILE_BYTES + 1_048_576;
/** Any other GraphQL request body (Yoga's own default). */
export const GRAPHQL_MAX_BODY_BYTES = 25_000_000;

const MULTIPART = /^multipart\/form-data\b/i;

const tooLarge = (limit: number) =>
  createGraphQLError(`Request body exceeds the limit of ${limit} bytes.`, {
    extensions: { code: 'PAYLOAD_TOO_LARGE', http: { status: 413 } },
  });

/**
 * The request body limit of /graphql, in place of Yoga's `maxRequestBodySize` (turn that off): a declared
 * Content-Length over the limit is refused unread, a chunked body the moment it passes the limit, both as 413
 * PAYLOAD_TOO_LARGE. Yoga's own limit reports an oversized chunked multipart body as a 400 "invalid multipart
 * data" and abandons the connection mid-body, which leaves a keep-alive client waiting forever.
 */
export function useBodyLimit(
  limits = { upload: GRAPHQL_MAX_UPLOAD_BODY_BYTES, other: GRAPHQL_MAX_BODY_BYTES },
): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      if (!requestParser || request.method === 'GET' || request.method === 'HEAD') return;
      const limit = MULTIPART.test(request.headers.get('content-type') ?? '') ? limits.upload : limits.other;
      const declared = Number(request.headers.get('content-length') ?? Number.NaN);
      if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
      const parse = requestParser;
      setRequestParser(async (incoming) => {
        if (!incoming.body) return parse(incoming);
        const body = await readAllLimited(incoming.body, limit, () => tooLarge(limit), {
          discardUpToBytes: DISCARD_LIMIT_BYTES,
        });
        return parse(new fetchAPI.Request(incoming.url, { method: incoming.method, headers: incoming.headers, body }));
      });
    },
  };
}
