import type { Plugin } from 'graphql-yoga';
import { clip } from '../src/errors.ts';

/** The content types a POST to /graphql may have. */
export const GRAPHQL_POST_TYPES = ['application/json', 'application/graphql+json', 'multipart/form-data'];

/**
 * POST /graphql takes JSON, or a multipart upload (graphql-multipart-request-spec). A browser sends JSON
 * cross-site only after a CORS preflight, so another site's page cannot make a visitor's browser run a mutation
 * with a form or a plain `fetch` (Yoga also parses `application/x-www-form-urlencoded` and `application/graphql`,
 * which any form or `text/plain` trick can send). A multipart body can come from a form, but it only acts for an
 * account with an `Authorization` or `SIGN-IN-WITH-X` header, which a browser also sends only after a preflight.
 * Anything else is a 415 before the body is read. The graphql-sse endpoint checks its own (schema/graphql-stream.ts).
 */
export function useJsonOrMultipartPosts(deps: { endpoint: string }): Plugin {
  return {
    onRequest({ request, url, endResponse, fetchAPI }) {
      if (request.method !== 'POST' || url.pathname !== deps.endpoint) return;
      const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      if (GRAPHQL_POST_TYPES.includes(type)) return;
      const message = `POST ${deps.endpoint} takes ${GRAPHQL_POST_TYPES.join(', ')}; got ${clip(type) || 'no content type'}.`;
      endResponse(
        new fetchAPI.Response(JSON.stringify({ errors: [{ message, extensions: { code: 'INVALID_CONTENT_TYPE' } }] }), {
          status: 415,
          headers: { accept: GRAPHQL_POST_TYPES.join(', '), 'content-type': 'application/json; charset=utf-8' },
        }),
      );
    },
  };
}
