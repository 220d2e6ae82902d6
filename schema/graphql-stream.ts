import { getOperationAST, GraphQLError, type DocumentNode, type ExecutionResult } from 'graphql';
import { createHandler, type Response as SseAnswer, type RequestParams } from 'graphql-sse';
import { createGraphQLError, type Plugin, type YogaInitialContext } from 'graphql-yoga';
import { readAllLimited, DISCARD_LIMIT_BYTES } from '../src/byte-stream.ts';
import type { Logger } from '../src/logger.ts';
import { endingInErrorResult, isAsyncIterable, subscriptionError } from './subscription-errors.ts';

type ServerContext = Record<string, unknown>;
type Enveloped = ReturnType<Parameters<NonNullable<Plugin['onYogaInit']>>[0]['yoga']['getEnveloped']>;
type Operation = ExecutionResult | AsyncIterable<ExecutionResult>;

// A new object per answer: the fetch ponyfill's Response writes `content-length` into the headers object it is
// given, so a shared one would hand one answer's length to the next (and wedge the client's connection).
const jsonHeaders = () => ({ 'content-type': 'application/json; charset=utf-8' });
const UNEXPECTED = { message: 'Unexpected error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } };

/**
 * The graphql-sse endpoint (`/graphql/stream`), in place of @graphql-yoga/plugin-graphql-sse, so that nothing
 * thrown while an operation is prepared or streamed escapes the transport:
 * - a syntax error, a refused document (validation, the limits of schema/limits.ts) or a context that cannot be
 *   built is an answer with a 4xx status and `{ errors }`, not a throw (a 500);
 * - the operation's result stream ends with an error result when it throws (schema/subscription-errors.ts);
 * - a throw anywhere else while streaming is logged and ends the event stream with an error event, where the
 *   plugin's fetch adapter rejected a stream read and the process exited on the unhandled rejection;
 * - the body is read up to `maxBodyBytes` (413 past it) and a POST must be `application/json` (415): a browser
 *   form cannot send that without a CORS preflight.
 * Authentication failures are answered before this by schema/sse-errors.ts.
 */
export function useGraphQLStream(deps: { endpoint: string; logger: Logger; maxBodyBytes: number }): Plugin {
  const serverContexts = new WeakMap<Request, ServerContext>();
  let handler: ((req: Parameters<ReturnType<typeof createHandler<Request>>>[0]) => Promise<SseAnswer>) | undefined;
  return {
    onYogaInit({ yoga }) {
      handler = createHandler<Request>({
        onSubscribe: (req, params) =>
          prepare(yoga.getEnveloped({ ...serverContexts.get(req.raw), request: req.raw, params }), params, deps.logger),
      });
    },
    onRequest({ request, url, endResponse, fetchAPI, serverContext }) {
      if (!url.pathname.endsWith(deps.endpoint) || !handler) return;
      serverContexts.set(request, serverContext as ServerContext);
      const answer = async (): Promise<Response> => {
        try {
          const body = await readBody(request, deps.maxBodyBytes);
          if (body instanceof GraphQLError) return errorResponse(fetchAPI, statusOf(body), [body]);
          const [content, init] = await handler!({
            method: request.method,
            url: request.url,
            headers: request.headers,
            body: () => body,
            raw: request,
            context: undefined,
          });
          if (content === null || typeof content === 'string') return new fetchAPI.Response(content, init);
          return new fetchAPI.Response(eventStream(fetchAPI, content, request.signal, deps.logger), init);
        } catch (error) {
          deps.logger.error({ err: error }, 'graphql stream request failed');
          return new fetchAPI.Response(JSON.stringify({ errors: [UNEXPECTED] }), {
            status: 500,
            headers: jsonHeaders(),
          });
        }
      };
      return answer().then(endResponse);
    },
  };
}

/** The request body as text, or the refusal of a POST that is too large or not JSON. */
async function readBody(request: Request, limit: number): Promise<string | GraphQLError> {
  if (request.method !== 'POST') return '';
  const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json')
    return createGraphQLError('POST requests to the stream endpoint must be application/json.', {
      extensions: { code: 'INVALID_CONTENT_TYPE', http: { status: 415 } },
    });
  const tooLarge = () =>
    createGraphQLError(`Request body exceeds the limit of ${limit} bytes.`, {
      extensions: { code: 'PAYLOAD_TOO_LARGE', http: { status: 413 } },
    });
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > limit) return tooLarge();
  if (!request.body) return '';
  try {
    const bytes = await readAllLimited(request.body, limit, tooLarge, { discardUpToBytes: DISCARD_LIMIT_BYTES });
    return new TextDecoder().decode(bytes);
  } catch (error) {
    if (error instanceof GraphQLError) return error;
    return createGraphQLError('The request body could not be read.', { extensions: { code: 'INVALID_REQUEST' } });
  }
}

/** Parse, validate, build the context and run: every refusal is an answer, never a throw. */
async function prepare(enveloped: Enveloped, params: RequestParams, logger: Logger): Promise<SseAnswer | Operation> {
  let document: DocumentNode;
  try {
    document = enveloped.parse(params.query);
    const errors = enveloped.validate(enveloped.schema, document);
    if (errors.length > 0) return refusal(400, errors);
  } catch (error) {
    if (error instanceof GraphQLError) return refusal(400, [error]);
    throw error;
  }
  const operation = getOperationAST(document, params.operationName);
  if (!operation) return refusal(400, [createGraphQLError('Could not determine which operation to run.')]);
  let contextValue: YogaInitialContext;
  try {
    contextValue = (await enveloped.contextFactory()) as YogaInitialContext;
  } catch (error) {
    if (error instanceof GraphQLError) return refusal(statusOf(error), [error]);
    throw error;
  }
  const args = {
    schema: enveloped.schema,
    document,
    contextValue,
    variableValues: params.variables,
    operationName: params.operationName,
  };
  try {
    const result = (await (operation.operation === 'subscription'
      ? enveloped.subscribe(args)
      : enveloped.execute(args))) as Operation;
    if (isAsyncIterable<ExecutionResult>(result)) return endingInErrorResult(result, logger);
    // graphql-sse sends a result only when it has `data`: a refusal at subscribe time has `errors` alone.
    return 'data' in result ? result : { ...result, data: null };
  } catch (error) {
    return { data: null, errors: [subscriptionError(error, logger)] };
  }
}

function statusOf(error: GraphQLError): number {
  const http = error.extensions.http as { status?: unknown } | undefined;
  return typeof http?.status === 'number' ? http.status : 400;
}

function refusal(status: number, errors: readonly GraphQLError[]): SseAnswer {
  const body = JSON.stringify({ errors: errors.map(withoutHttp) });
  return [body, { status, statusText: status === 400 ? 'Bad Request' : 'Refused', headers: jsonHeaders() }];
}

function errorResponse(fetchAPI: { Response: typeof Response }, status: number, errors: readonly GraphQLError[]) {
  return new fetchAPI.Response(JSON.stringify({ errors: errors.map(withoutHttp) }), { status, headers: jsonHeaders() });
}

/** The error as sent: its `http` extension is for us, not for the client. */
function withoutHttp(error: GraphQLError) {
  const { http: _http, ...extensions } = error.extensions;
  return { ...error.toJSON(), extensions };
}

/**
 * The event stream of graphql-sse's answer. A read that throws is logged and ends the stream with an error
 * event: it must not reject, since the fetch ponyfill's stream would leave the rejection unhandled.
 */
function eventStream(
  fetchAPI: { ReadableStream: typeof ReadableStream },
  events: AsyncGenerator<string, void, undefined>,
  signal: AbortSignal,
  logger: Logger,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const stop = () => void events.return(undefined).catch(() => undefined);
  if (signal.aborted) stop();
  else signal.addEventListener('abort', stop, { once: true });
  return new fetchAPI.ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await events.next();
        if (value) controller.enqueue(encoder.encode(value));
        if (done) controller.close();
      } catch (error) {
        logger.error({ err: error }, 'graphql stream failed');
        const data = JSON.stringify({ data: null, errors: [UNEXPECTED] });
        controller.enqueue(encoder.encode(`event: next\ndata: ${data}\n\nevent: complete\ndata: \n\n`));
        controller.close();
      }
    },
    async cancel() {
      stop();
    },
  });
}
