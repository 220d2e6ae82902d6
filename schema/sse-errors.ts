import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { AppError } from '../src/errors.ts';
import type { Operations } from '../src/services.ts';

/**
 * Error answers on the graphql-sse endpoint, which Yoga's own request pipeline does not give it:
 * - a bad API key is a 401 (like /graphql), not an unhandled error from the context factory (a 500);
 * - a subscription refused at subscribe time (a non-ADMIN key on `usageUpdated`) reaches the client as an
 *   error result: graphql-js returns `{ errors }` without `data`, which graphql-sse does not recognise as a
 *   result, so `data: null` is added.
 * Register it before useGraphQLSSE.
 */
export function useSseErrors(deps: {
  services: Operations;
  endpoint: string;
  httpStatus: (error: AppError) => number;
}): Plugin<Record<string, never>, { requestId?: string }> {
  return {
    async onRequest({ request, url, endResponse, fetchAPI, serverContext }) {
      if (!url.pathname.endsWith(deps.endpoint)) return;
      try {
        await deps.services.auth.authenticate(request.headers, serverContext.requestId ?? 'sse');
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        const body = JSON.stringify({ errors: [{ message: error.message, extensions: { code: error.code } }] });
        endResponse(
          new fetchAPI.Response(body, {
            status: deps.httpStatus(error),
            headers: { 'content-type': 'application/json; charset=utf-8' },
          }),
        );
      }
    },
    onSubscribe() {
      return {
        onSubscribeResult({ result, setResult }) {
          if (Symbol.asyncIterator in result) return;
          const refused = result as ExecutionResult;
          if (refused.errors && !('data' in refused)) setResult({ ...refused, data: null });
        },
      };
    },
  };
}
