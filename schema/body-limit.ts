import { createGraphQLError, type Plugin } from 'graphql-yoga';
import type { GraphQLBodyLimits } from '../src/body-limits.ts';
import { DISCARD_LIMIT_BYTES, readAllLimited } from '../src/byte-stream.ts';
import { SIWX_HEADER, SIWX_LEGACY_HEADER } from '../src/wallets/siwx-message.ts';

const MULTIPART = /^multipart\/form-data\b/i;

const tooLarge = (limit: number) =>
  createGraphQLError(`Request body exceeds the limit of ${limit} bytes.`, {
    extensions: { code: 'PAYLOAD_TOO_LARGE', http: { status: 413 } },
  });

/** Credentials the REST front door and the GraphQL context read (src/auth/auth.service.ts). */
const hasCredentials = (headers: Headers) =>
  headers.has('authorization') || headers.has(SIWX_HEADER) || headers.has(SIWX_LEGACY_HEADER);

/**
 * The request body limit of /graphql, in place of Yoga's `maxRequestBodySize` (turn that off), from the one table
 * of body limits (src/body-limits.ts): a multipart body the largest upload's, a JSON body the largest JSON
 * route's, and a body without credentials the plain JSON limit (only public queries run without them). A declared
 * Content-Length over the limit is refused unread, a chunked body the moment it passes the limit, both as 413
 * PAYLOAD_TOO_LARGE. Yoga's own limit reports an oversized chunked multipart body as a 400 "invalid multipart
 * data" and abandons the connection mid-body, which leaves a keep-alive client waiting forever.
 */
export function useBodyLimit(limits: GraphQLBodyLimits): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      if (!requestParser || request.method === 'GET' || request.method === 'HEAD') return;
      const multipart = MULTIPART.test(request.headers.get('content-type') ?? '');
      const limit = !hasCredentials(request.headers) ? limits.anonymous : multipart ? limits.upload : limits.json;
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
