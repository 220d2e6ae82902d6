/*
 * The GraphQL client: queries and mutations over POST /graphql, subscriptions over graphql-sse at
 * /graphql/stream, both with the signed-in credential. A new client is made per credential, so nothing cached
 * for one caller is shown to the next.
 */
import { Client, fetchExchange, subscriptionExchange } from '@urql/core';
import { createClient as createSseClient } from 'graphql-sse';
import { authHeaders } from './auth.ts';

export function createGraphqlClient(): Client {
  const sse = createSseClient({ url: '/graphql/stream', headers: authHeaders, retryAttempts: 3 });
  return new Client({
    url: '/graphql',
    // The document cache would show a charge made elsewhere only after a reload; the pages ask for fresh data.
    requestPolicy: 'cache-and-network',
    fetchOptions: () => ({ headers: authHeaders() }),
    exchanges: [
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (operation) => ({
          subscribe: (sink) => ({ unsubscribe: sse.subscribe({ ...operation, query: operation.query ?? '' }, sink) }),
        }),
      }),
    ],
  });
}
