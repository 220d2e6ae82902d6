import type { Plugin } from 'graphql-yoga';
import { AppError } from '../src/errors.ts';
import type { Operations } from '../src/services.ts';

/**
 * A bad API key on the graphql-sse endpoint is a 401 (like /graphql), answered before any work on the request.
 * Register it before useGraphQLStream (schema/graphql-stream.ts), which answers the other refusals.
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
        await deps.services.auth.authenticate(request.headers, serverContext.requestId ?? 'sse', true);
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
  };
}
