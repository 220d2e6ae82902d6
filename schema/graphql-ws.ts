import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { getOperationAST, GraphQLError, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { SubscribePayload } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { createGraphQLError } from 'graphql-yoga';
import { WebSocketServer, type WebSocket } from 'ws';
import { AppError } from '../src/errors.ts';
import type { Logger } from '../src/logger.ts';
import { newRequestId } from '../src/request-id.ts';
import { inServerSpan, tracingOn } from '../src/observability/tracing.ts';
import type { Operations } from '../src/services.ts';
import { endingInErrorResult, isAsyncIterable } from './subscription-errors.ts';
import type { GraphQLServer } from './yoga.ts';

const GOING_AWAY = 1001;
const CLOSE_HANDSHAKE_MS = 500;

type Enveloped = ReturnType<GraphQLServer['getEnveloped']>;

/** The credentials a client may send in `connection_init`'s payload, as it would send them as headers. */
const CREDENTIAL_HEADERS = ['authorization', 'sign-in-with-x'];

/** What a WebSocket brings to each of its operations: the upgrade request's headers with the payload's credentials. */
interface Connection {
  readonly headers: Headers;
  readonly apiKeyCaller: boolean;
  /** Each operation's own signal (its Request's), aborted when it completes or the socket closes. */
  readonly operations: Map<string, AbortController>;
}

export interface GraphQLWebSocket {
  /** The HTTP server's `upgrade` event: a WebSocket on `path`, any other upgrade refused. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Shutdown: every WebSocket still open is closed (1001, SERVER_SHUTTING_DOWN). */
  close(): Promise<void>;
}

/**
 * GraphQL over WebSocket (graphql-ws, the default transport of Apollo and urql) on /graphql, through Yoga's own
 * plugins so that it has what the HTTP transports have: a bad credential (in the upgrade request's headers or in
 * `connection_init`'s payload) closes the socket with 4403 before any operation; the document limits
 * (schema/limits.ts), the introspection policy (schema/introspection.ts) and the error masking (schema/yoga.ts)
 * apply to every operation; a stream that throws ends with an error result (schema/subscription-errors.ts).
 * Nothing a client sends can end the process: a frame over `maxPayloadBytes` closes its socket (1009), a frame
 * that is not the protocol's closes it (4400), and socket errors are logged.
 */
interface WebSocketDeps {
  graphql: GraphQLServer;
  services: Operations;
  logger: Logger;
  path: string;
  maxPayloadBytes: number;
}

export function createGraphQLWebSocket(deps: WebSocketDeps): GraphQLWebSocket {
  const wss = new WebSocketServer({ noServer: true, maxPayload: deps.maxPayloadBytes });
  const connections = new WeakMap<object, Connection>();
  const operations = new WeakMap<object, Enveloped>();
  /** The trace an operation continues (the upgrade request's traceparent), when tracing. */
  const traceHeaders = new WeakMap<object, IncomingHttpHeaders>();
  wss.on('error', (error) => deps.logger.warn({ err: error }, 'graphql websocket server error'));
  wss.on('connection', (socket: WebSocket) => {
    socket.on('error', (error) => deps.logger.debug({ err: error }, 'graphql websocket error'));
  });

  useServer<Record<string, unknown> | undefined>(
    {
      connectionInitWaitTimeout: 10_000,
      async onConnect(ctx) {
        const headers = connectionHeaders(ctx.extra.request, ctx.connectionParams);
        try {
          const auth = await deps.services.auth.authenticate(headers, newRequestId());
          connections.set(ctx, { headers, apiKeyCaller: auth.kind === 'apiKey', operations: new Map() });
          return true;
        } catch (error) {
          if (error instanceof AppError) return false;
          throw error;
        }
      },
      onClose(ctx) {
        for (const operation of connections.get(ctx)?.operations.values() ?? []) operation.abort();
      },
      onComplete(ctx, id) {
        const operations = connections.get(ctx)?.operations;
        operations?.get(id)?.abort();
        operations?.delete(id);
      },
      async onSubscribe(ctx, id, payload) {
        const connection = connections.get(ctx);
        if (!connection) return [createGraphQLError('Not connected.')];
        const prepared = await prepareOperation(deps, connection, payload);
        if (!('enveloped' in prepared)) return prepared;
        operations.set(prepared.args.contextValue as object, prepared.enveloped);
        if (tracingOn()) traceHeaders.set(prepared.args.contextValue as object, traceHeadersOf(connection.headers));
        connection.operations.set(id, prepared.abort); // from here on, onComplete or onClose aborts it
        return prepared.args;
      },
      execute: (args) =>
        inServerSpan(traceHeaders.get(args.contextValue as object) ?? {}, 'GraphQL WebSocket', async () =>
          operations.get(args.contextValue as object)!.execute(args),
        ),
      subscribe: (args) =>
        inServerSpan(traceHeaders.get(args.contextValue as object) ?? {}, 'GraphQL WebSocket', async () => {
          const result = await operations.get(args.contextValue as object)!.subscribe(args);
          return isAsyncIterable<ExecutionResult>(result) ? endingInErrorResult(result, deps.logger) : result;
        }),
    },
    wss,
  );

  return {
    handleUpgrade(req, socket, head) {
      socket.on('error', (error) => deps.logger.debug({ err: error }, 'graphql websocket upgrade error'));
      const path = new URL(req.url ?? '/', 'http://localhost').pathname;
      if (path !== deps.path) {
        socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
    },
    async close() {
      const open = [...wss.clients];
      for (const client of open) client.close(GOING_AWAY, 'SERVER_SHUTTING_DOWN');
      // A client that does not answer the closing handshake in time is cut off; one that does, or none open, ends
      // the wait at once.
      if (open.length > 0) await closedOrTimeout(open, CLOSE_HANDSHAKE_MS);
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

/** Resolves when every socket of `sockets` has closed, or after `ms`, whichever comes first. */
async function closedOrTimeout(sockets: readonly WebSocket[], ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const closed = sockets.map((socket) =>
    socket.readyState === socket.CLOSED ? undefined : new Promise((resolve) => socket.once('close', resolve)),
  );
  await Promise.race([
    Promise.all(closed),
    new Promise((resolve) => {
      timer = setTimeout(resolve, ms);
      timer.unref();
    }),
  ]);
  clearTimeout(timer);
}

/** The upgrade request's headers, with the credentials `connection_init`'s payload carries. */
function connectionHeaders(request: IncomingMessage, params: Record<string, unknown> | undefined): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string') headers.set(name, value);
  }
  for (const [name, value] of Object.entries(params ?? {})) {
    if (CREDENTIAL_HEADERS.includes(name.toLowerCase()) && typeof value === 'string') headers.set(name, value);
  }
  return headers;
}

/**
 * One operation through Yoga's plugins, as an HTTP request would go: parsed, validated (the limits are validation
 * rules) and given its context, or the errors to send instead.
 */
async function prepareOperation(
  deps: WebSocketDeps,
  connection: Connection,
  payload: SubscribePayload,
): Promise<{ args: ExecutionArgs; enveloped: Enveloped; abort: AbortController } | readonly GraphQLError[]> {
  const abort = new AbortController();
  const request = new Request(`http://localhost${deps.path}`, { headers: connection.headers, signal: abort.signal });
  const enveloped = deps.graphql.getEnveloped({
    request,
    requestId: newRequestId(),
    params: payload,
    apiKeyCaller: connection.apiKeyCaller,
  });
  let document: DocumentNode;
  let contextValue: Awaited<ReturnType<Enveloped['contextFactory']>>;
  try {
    document = enveloped.parse(payload.query);
    const errors = enveloped.validate(enveloped.schema, document);
    if (errors.length > 0) return errors.map(withoutHttp);
    if (!getOperationAST(document, payload.operationName))
      return [createGraphQLError('Could not determine which operation to run.')];
    contextValue = await enveloped.contextFactory();
  } catch (error) {
    if (error instanceof GraphQLError) return [withoutHttp(error)];
    throw error;
  }
  const args: ExecutionArgs = {
    schema: enveloped.schema,
    document,
    contextValue,
    variableValues: payload.variables,
    operationName: payload.operationName,
  };
  return { args, enveloped, abort };
}

/** The error as sent: its `http` extension is for the HTTP transports, not for the client. */
function withoutHttp(error: GraphQLError): GraphQLError {
  if (!('http' in error.extensions)) return error;
  const { http: _http, ...extensions } = error.extensions;
  return new GraphQLError(error.message, { nodes: error.nodes, path: error.path, extensions });
}

/** The W3C trace headers of a socket's upgrade request. */
function traceHeadersOf(headers: Headers): IncomingHttpHeaders {
  return { traceparent: headers.get('traceparent') ?? undefined, tracestate: headers.get('tracestate') ?? undefined };
}
