import { createInMemoryAPQStore, useAPQ } from '@graphql-yoga/plugin-apq';
import { GraphQLError } from 'graphql';
import { createGraphQLError, createYoga, maskError as defaultMaskError, type YogaServerInstance } from 'graphql-yoga';
import type { AuthContext } from '../src/auth/auth-context.ts';
import type { GraphQLBodyLimits } from '../src/body-limits.ts';
import type { GraphQLLimits } from '../src/config.ts';
import { AppError } from '../src/errors.ts';
import type { Logger } from '../src/logger.ts';
import { recordCaller, type CallRecord } from '../src/observability/call-log.ts';
import { requestOrigin } from '../src/media/media-links.ts';
import type { Operations } from '../src/services.ts';
import type { GraphQLContext } from './context.ts';
import { schema } from './index.ts';
import { useBodyLimit } from './body-limit.ts';
import { useReadsOnlyOverGet } from './get-reads-only.ts';
import { renderGraphiQL, useGraphiQLAssets } from './graphiql.ts';
import { useIntrospectionPolicy } from './introspection.ts';
import { useUnreadableRequestsAre400 } from './parse-errors.ts';
import { useDocumentLimits } from './limits.ts';
import { useJsonOrMultipartPosts } from './post-content-types.ts';
import { useGraphQLStream } from './graphql-stream.ts';
import { useSseErrors } from './sse-errors.ts';
import { useSubscriptionErrors } from './subscription-errors.ts';
import { useWalletTopUpErrors } from './wallet-errors.ts';
import { useOperationSpanNames } from './tracing.ts';

/** What the HTTP front door hands to each GraphQL request. */
export interface GraphQLServerContext {
  readonly requestId: string;
  /** The call's log record (src/observability/call-log.ts); none over a WebSocket. */
  readonly call?: CallRecord;
}

export interface GraphQLOptions extends GraphQLLimits {
  readonly graphiql: boolean;
}

export type GraphQLServer = YogaServerInstance<GraphQLServerContext, GraphQLContext>;

export function createGraphQLServer(deps: {
  services: Operations;
  logger: Logger;
  options: GraphQLOptions;
  /** Request body limits (src/body-limits.ts graphqlBodyLimits). */
  bodyLimits: GraphQLBodyLimits;
  /** The HTTP status of a refusal before execution (a bad key): the REST table's, handed in by src/app.ts. */
  httpStatus: (error: AppError) => number;
}): GraphQLServer {
  return createYoga<GraphQLServerContext, GraphQLContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    maxRequestBodySize: false, // useBodyLimit below enforces it (src/body-limits.ts)
    cors: false, // the front door answers CORS for both surfaces
    graphiql: deps.options.graphiql ? { title: 'Lagoon GraphQL', defaultQuery: DEFAULT_QUERY } : false,
    renderGraphiQL,
    logging: {
      debug: (...args) => deps.logger.debug({ args }, 'graphql'),
      info: (...args) => deps.logger.info({ args }, 'graphql'),
      warn: (...args) => deps.logger.warn({ args }, 'graphql'),
      error: (...args) => deps.logger.error({ args }, 'graphql'),
    },
    maskedErrors: {
      // Expected failures keep their message and code; anything else is masked ("Unexpected error.").
      maskError(error, message, isDev) {
        const original = error instanceof GraphQLError ? error.originalError : error;
        if (original instanceof AppError) {
          const graphQLError = error instanceof GraphQLError ? error : undefined;
          return createGraphQLError(original.message, {
            nodes: graphQLError?.nodes,
            path: graphQLError?.path,
            extensions: { code: original.code, ...original.extra() },
          });
        }
        return defaultMaskError(error, message, isDev);
      },
    },
    plugins: [
      ...(deps.options.graphiql ? [useGraphiQLAssets()] : []),
      // Automatic persisted queries (Apollo's and urql's): a hash alone runs the document stored under it. The
      // store is this process's, bounded (least recently used out); the document is validated on every run.
      useAPQ({ store: createInMemoryAPQStore({ max: APQ_MAX_DOCUMENTS, ttl: APQ_TTL_MS }) }),
      useReadsOnlyOverGet(),
      useJsonOrMultipartPosts({ endpoint: '/graphql' }),
      useIntrospectionPolicy({ mode: deps.options.introspection, services: deps.services }),
      ...useDocumentLimits(deps.options),
      useSseErrors({ services: deps.services, endpoint: '/graphql/stream', httpStatus: deps.httpStatus }),
      useGraphQLStream({ endpoint: '/graphql/stream', logger: deps.logger, maxBodyBytes: deps.bodyLimits.stream }),
      useSubscriptionErrors({ logger: deps.logger }),
      useBodyLimit(deps.bodyLimits),
      useUnreadableRequestsAre400(),
      useWalletTopUpErrors(),
      useOperationSpanNames(),
    ],
    context: async ({ request, requestId, call, params }): Promise<GraphQLContext> => {
      if (call && params.operationName) call.operation = params.operationName.slice(0, 100);
      let auth: AuthContext;
      try {
        auth = await deps.services.auth.authenticate(request.headers, requestId, true);
      } catch (error) {
        if (error instanceof AppError) {
          throw createGraphQLError(error.message, {
            extensions: { code: error.code, http: { status: deps.httpStatus(error) } },
          });
        }
        throw error;
      }
      if (call) recordCaller(call, auth);
      const origin = requestOrigin({
        host: request.headers.get('host') ?? undefined,
        forwardedProto: request.headers.get('x-forwarded-proto') ?? undefined,
        fallbackUrl: request.url,
      });
      return { auth, services: deps.services, requestId, signal: request.signal, origin };
    },
  });
}

const APQ_MAX_DOCUMENTS = 1_000;
const APQ_TTL_MS = 24 * 60 * 60 * 1000;

const DEFAULT_QUERY = `# Lagoon GraphQL. Add an "Authorization: Bearer <API key>" header below for account data.
query Catalog {
  account { id name balances { currency available } }
  apiKeys { id description last6Chars apiKeyType lastUsedAt }
}
`;
