import { getOperationAST, parse, type DocumentNode } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';

/**
 * GET serves queries only, on /graphql and on the graphql-sse endpoint alike. Mutations and subscriptions
 * charge money or change state (a streamed chat completion is a subscription), and a GET can be sent by a
 * link, a prefetch or a crawler, retried by a proxy, and leaves its operation in access logs. Yoga already
 * refuses mutations over GET on /graphql; this also covers subscriptions (Yoga answers them over GET with
 * `Accept: text/event-stream`) and every operation on the SSE endpoint. A GET without `query` (the event
 * stream of graphql-sse's single-connection mode) is left alone: its operations arrive by POST.
 * Register it first, so it answers before any other plugin starts work. A GET with a persisted query's hash only
 * (its document stored by schema/yoga.ts's APQ plugin, registered before this one) is checked once the document
 * is known.
 */
export function useReadsOnlyOverGet(): Plugin {
  return {
    onRequest({ request, url, endResponse, fetchAPI }) {
      if (request.method !== 'GET') return;
      const source = url.searchParams.get('query');
      if (source === null) return;
      let document: DocumentNode;
      try {
        document = parse(source);
      } catch {
        return; // Yoga answers a syntax error itself
      }
      const operation = getOperationAST(document, url.searchParams.get('operationName') || undefined);
      if (!operation || operation.operation === 'query') return;
      const body = JSON.stringify({
        errors: [
          {
            message: `Can only perform a ${operation.operation} operation from a POST request.`,
            extensions: { code: 'BAD_REQUEST' },
          },
        ],
      });
      endResponse(
        new fetchAPI.Response(body, {
          status: 405,
          headers: { allow: 'POST', 'content-type': 'application/json; charset=utf-8' },
        }),
      );
    },
    onParams({ request, params }) {
      if (request.method !== 'GET' || typeof params.query !== 'string') return;
      if (new URL(request.url).searchParams.has('query')) return; // answered in onRequest
      let document: DocumentNode;
      try {
        document = parse(params.query);
      } catch {
        return;
      }
      const operation = getOperationAST(document, params.operationName || undefined);
      if (!operation || operation.operation === 'query') return;
      throw createGraphQLError(`Can only perform a ${operation.operation} operation from a POST request.`, {
        extensions: { code: 'BAD_REQUEST', http: { status: 405, headers: { allow: 'POST' } } },
      });
    },
  };
}
