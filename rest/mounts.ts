import { schemaReady } from '../src/db/migrate.ts';
import type { DatabaseHandle } from '../src/db/database.ts';
import type { Metrics } from '../src/metrics.ts';
import type { CallRecord } from '../src/observability/call-log.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpRequest, HttpResponse } from './exchange.ts';
import { json, type Reply } from './http.ts';
import type { Mount } from './pipeline.ts';
import { REST_PREFIX } from './pipeline.ts';

/*
 * What the pipeline serves beside the REST table: GraphQL (Yoga works on Fetch Requests, so this is where they
 * stay) and the operational endpoints.
 */

/** What the front door hands each GraphQL request: its id, and its call's record (caller, operation name). */
interface GraphQLCallContext {
  readonly requestId: string;
  readonly call: CallRecord;
}

/** Yoga's two entries (schema/yoga.ts): a Fetch Request, or Node's objects made into one. */
export interface GraphQLEntry {
  fetch(request: Request, context: GraphQLCallContext): Promise<Response> | Response;
  handleNodeRequestAndResponse(
    req: IncomingMessage,
    res: ServerResponse,
    context: GraphQLCallContext,
  ): Promise<Response> | Response;
}

/** /graphql and /graphql/stream: Yoga's answer, streamed (subscriptions) through the pipeline. */
export function graphqlMount(graphql: GraphQLEntry): Mount {
  return (req, res, path, requestId, call) => {
    if (path !== '/graphql' && !path.startsWith('/graphql/')) return undefined;
    const label = path === '/graphql' ? '/graphql' : '/graphql/stream';
    return answer(graphql, req, res, { requestId, call }).then((reply) => ({ reply, label }));
  };
}

async function answer(graphql: GraphQLEntry, req: HttpRequest, res: HttpResponse, context: GraphQLCallContext) {
  const response = req.fetchRequest
    ? await graphql.fetch(req.fetchRequest, context)
    : // Without a Fetch Request, these are the HTTP server's own objects.
      await graphql.handleNodeRequestAndResponse(req as IncomingMessage, res as unknown as ServerResponse, context);
  return fromResponse(response);
}

/** A Fetch Response as a Reply: its body is streamed as it is read. */
function fromResponse(response: Response): Reply {
  const headers = Object.fromEntries(response.headers);
  if (!response.body) return { status: response.status, headers, body: '' };
  return { status: response.status, headers, stream: response.body };
}

export interface OpsDeps {
  readonly database: DatabaseHandle;
  readonly metrics: Metrics;
  readonly version: string;
  readonly closing: () => boolean;
}

/** /healthz, /readyz, /metrics and the index at /. */
export function opsMount(deps: OpsDeps): Mount {
  return (req, _res, path) => {
    switch (path) {
      case '/healthz':
        return Promise.resolve({ reply: json({ status: 'ok' }), label: '/healthz' });
      case '/readyz':
        return readiness(deps).then((reply) => ({ reply, label: '/readyz' }));
      case '/metrics':
        return deps.metrics.render().then((body) => ({
          reply: { status: 200, headers: { 'content-type': deps.metrics.contentType }, body },
          label: '/metrics',
        }));
      case '/': {
        if (req.method !== 'GET') return undefined;
        const index = {
          name: 'lagoon',
          version: deps.version,
          graphql: '/graphql',
          rest: REST_PREFIX,
          openapi: `${REST_PREFIX}/openapi.json`,
        };
        return Promise.resolve({ reply: json(index), label: '/' });
      }
      default:
        return undefined;
    }
  };
}

/** Ready only when the database answers and carries this build's schema. */
async function readiness({ database, closing }: OpsDeps): Promise<Reply> {
  const reason = closing()
    ? 'shutting down'
    : !(await database.ping())
      ? 'database unreachable'
      : !(await schemaReady(database.db))
        ? 'schema missing'
        : undefined;
  const body = { status: reason ? 'unavailable' : 'ready', database: database.kind, ...(reason && { reason }) };
  return json(body, reason ? 503 : 200, reason ? { 'retry-after': '5' } : {});
}
