import type { IncomingMessage, ServerResponse } from 'node:http';
import { anonymous, type AuthContext } from '../src/auth/auth-context.ts';
import { bodyLimits } from '../src/body-limits.ts';
import type { Config } from '../src/config.ts';
import { formatNanoFixed, parseNano } from '../src/billing/money.ts';
import { AppError, clip, NotFoundError, WalletTopUpRequiredError } from '../src/errors.ts';
import { paymentRequiredHeader } from '../src/wallets/payment-requirements.ts';
import type { Logger } from '../src/logger.ts';
import type { Metrics } from '../src/metrics.ts';
import { callFields, recordCaller, type CallLog, type CallRecord } from '../src/observability/call-log.ts';
import { logTraceId } from '../src/observability/log-trace-id.ts';
import { newRequestId } from '../src/request-id.ts';
import { nameServerSpan, runIn, startServerSpan, type Span } from '../src/observability/tracing.ts';
import type { Operations } from '../src/services.ts';
import { RouteCall } from './call.ts';
import { corsHeaders, preflight } from './cors.ts';
import { FetchResponder, requestFromFetch, type HttpRequest, type HttpResponse } from './exchange.ts';
import { errorStatus, rateWindowHeaders } from './error-map.ts';
import { inFlightLimit, type InFlightLimit } from './in-flight.ts';
import { errorPayload, JSON_TYPE_HEADER, type Reply } from './http.ts';
import { Router, type Route } from './router.ts';
import { writeChunks, writeEvents } from './sse.ts';

/*
 * The one HTTP pipeline: request id, CORS, the in-flight limit (in-flight.ts), routing, authentication, the handler, error mapping, writing the answer
 * (whole, streamed or SSE), metrics and the request log. It serves Node's objects (the HTTP server); `fetch` runs
 * the same pipeline for a Fetch Request (exchange.ts). GraphQL is mounted beside the REST table.
 */

export const REST_PREFIX = '/api/v1';

/** A mount outside the REST table (GraphQL, the operational endpoints): a Reply, or undefined when not its path. */
export type Mount = (
  req: HttpRequest,
  res: HttpResponse,
  path: string,
  requestId: string,
  call: CallRecord,
) => MountResult | undefined;
export type MountResult = Promise<{ reply: Reply; label: string }>;

export interface PipelineDeps {
  readonly services: Operations;
  readonly config: Config;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** The records of the running calls, which their settlements fill for the log line. */
  readonly callLog: CallLog;
  /** The REST table, paths below REST_PREFIX. */
  readonly routes: readonly Route[];
  readonly mounts: readonly Mount[];
}

export interface Pipeline {
  readonly listener: (req: IncomingMessage, res: ServerResponse) => void;
  fetch(request: Request): Promise<Response>;
  /** The HTTP server's `upgrade` listener behind the same in-flight limit (in-flight.ts). */
  readonly guardUpgrade: InFlightLimit['guardUpgrade'];
}

const REQUEST_ID = /^[0-9a-f]{32}$/i;
/** What a request whose client left before its answer counts as (nginx's "client closed request"). */
const CLIENT_CLOSED = 499;

interface Exchange {
  readonly req: HttpRequest;
  readonly res: HttpResponse;
  readonly requestId: string;
  /** Sent with every answer: the request id and CORS. */
  readonly headers: Record<string, string>;
  readonly started: number;
  /**
   * The one client-gone signal: aborted when the connection closes before the answer is written. Handlers get it
   * (RouteContext.signal), and the stream writers stop their source on it.
   */
  readonly signal: AbortSignal;
  /** The request's server span, when tracing (src/observability/tracing.ts); ended when the answer is done. */
  readonly span: Span | undefined;
  /** Who called and what the call was charged, for its log line (src/observability/call-log.ts). */
  readonly call: CallRecord;
  /** The answer's route label and status, once known. */
  label: string;
  status: number;
}

export function createPipeline(deps: PipelineDeps): Pipeline {
  const { logger, metrics, config } = deps;
  const { router, labels } = routeTable(deps.routes);
  const origins = new Set(config.http.corsOrigins);
  const limits = bodyLimits(config.http);
  const responder = createResponder(logger, metrics, config);
  const { send, sendWhole, observe, paymentRequired, admit, inFlight, unhandled } = responder;

  function serve(req: HttpRequest, res: HttpResponse): void {
    const requestId = requestIdOf(req.headers['x-request-id']);
    const traced = serverSpanOf(req, res, requestId);
    const ex = newExchange(req, res, origins, deps.callLog, requestId, traced?.span);
    if (!admit(ex)) return logCall(logger, ex, deps.callLog);
    runIn(traced, () => dispatch(ex))
      .catch((error: unknown) => unhandled(ex, error))
      .finally(() => logCall(logger, ex, deps.callLog));
  }

  async function dispatch(ex: Exchange): Promise<void> {
    const { req, res } = ex;
    const method = req.method ?? 'GET';
    if (method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
      sendWhole(ex, 'preflight', preflight(origins, req.headers));
      return;
    }
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path === REST_PREFIX || path.startsWith(`${REST_PREFIX}/`)) {
      const match = router.match(method, path.slice(REST_PREFIX.length) || '/');
      if (!match) return sendWhole(ex, 'unmatched', errorReply(notFound(method, path), ex.requestId));
      if ('allowed' in match) return sendWhole(ex, 'unmatched', methodNotAllowed(method, path, match.allowed));
      return serveRoute(ex, match.route, match.params);
    }
    for (const mount of deps.mounts) {
      const mounted = mount(req, res, path, ex.requestId, ex.call);
      if (mounted) {
        const { reply, label } = await mounted;
        return send(ex, label, reply);
      }
    }
    sendWhole(ex, 'unmatched', errorReply(notFound(method, path), ex.requestId));
  }

  async function serveRoute(ex: Exchange, route: Route, params: Record<string, string>): Promise<void> {
    const label = labels.get(route) ?? route.path;
    try {
      const auth = await authenticate(deps.services, ex, route);
      recordCaller(ex.call, auth);
      // No credentials on a route a wallet may use: the x402 discovery body, with a fresh sign-in nonce.
      if (auth.kind === 'anonymous' && route.access === 'account') {
        const body = deps.services.wallets.discovery((ex.req.url ?? '/').split('?')[0] ?? '/');
        return sendWhole(ex, label, paymentRequired(body));
      }
      const limit = limits[route.bodyLimit ?? 'json'];
      const call = new RouteCall(ex.req, params, auth, deps.services, config, ex.requestId, ex.signal, limit);
      const reply = withRateWindows(deps.services, auth, await route.handler(call));
      await send(ex, label, withWalletBalance(auth, reply));
    } catch (error) {
      if (ex.signal.aborted) {
        observe(ex, label, CLIENT_CLOSED);
        return;
      }
      if (ex.res.headersSent) throw error;
      if (!(error instanceof AppError) || errorStatus(error) >= 500)
        logger.error({ reqId: ex.requestId, err: error, route: label }, 'request failed');
      if (error instanceof WalletTopUpRequiredError) {
        const { body } = await deps.services.wallets.topUpRequired(error.accountId);
        return sendWhole(ex, label, paymentRequired(body));
      }
      sendWhole(ex, label, errorReply(error, ex.requestId));
    }
  }

  return {
    listener: serve,
    guardUpgrade: inFlight.guardUpgrade,
    fetch(request) {
      const res = new FetchResponder(request.method === 'HEAD');
      request.signal.addEventListener('abort', () => res.close(), { once: true });
      serve(requestFromFetch(request), res);
      return res.response;
    },
  };
}

/**
 * A wallet caller's answer to a paid call carries its credit left, `X-Balance-Remaining` in USD with 6 decimals
 * (beside the key callers' `X-Balance-USD`, which the paid routes set).
 */
function withWalletBalance(auth: AuthContext, reply: Reply): Reply {
  const usd = reply.headers['x-balance-usd'];
  if (auth.kind !== 'wallet' || typeof usd !== 'string') return reply;
  return { ...reply, headers: { ...reply.headers, 'x-balance-remaining': formatNanoFixed(parseNano(usd), 6) } };
}

/**
 * The answer of a call a per-key rate limit admitted (any limited route: the services admit, this adds the headers)
 * carries its windows, `x-ratelimit-*-requests|tokens` (docs/api.md, Rate limits).
 */
function withRateWindows(services: Operations, auth: AuthContext, reply: Reply): Reply {
  if (auth.kind !== 'apiKey' && auth.kind !== 'wallet') return reply;
  const admission = services.rateLimits.windowsOf(auth);
  if (!admission) return reply;
  return { ...reply, headers: { ...reply.headers, ...rateWindowHeaders(admission) } };
}

const notFound = (method: string, path: string) => new NotFoundError(`Route not found: ${clip(method)} ${clip(path)}`);

/** The error body `{error, code}` (docs/api.md, Errors), its status and headers. */
function errorReply(error: unknown, requestId: string): Reply & { body: string } {
  const { status, body, headers } = errorPayload(error, requestId);
  return { status, headers: { 'content-type': JSON_TYPE_HEADER, ...headers }, body };
}

/** A request's exchange: its id (the caller's or a new one), CORS headers, client-gone signal and call record. */
function newExchange(
  req: HttpRequest,
  res: HttpResponse,
  origins: ReadonlySet<string>,
  callLog: CallLog,
  requestId: string,
  span: Span | undefined,
): Exchange {
  const started = performance.now();
  const headers = { 'x-request-id': requestId, ...corsHeaders(origins, req.headers.origin) };
  const signal = abortWhenClientGone(res).signal;
  const call = callLog.begin(requestId);
  return { req, res, requestId, headers, started, signal, span, call, label: 'unmatched', status: 0 };
}

/** The REST routes' matcher, and each route's label for metrics and logs: its template alone (the method has a label of its own). */
function routeTable(routes: readonly Route[]): { router: Router; labels: Map<Route, string> } {
  return { router: new Router(routes), labels: new Map(routes.map((route) => [route, `${REST_PREFIX}${route.path}`])) };
}

/** The caller's request id when it is one of ours (32 hex digits), else a new one. */
function requestIdOf(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming.toLowerCase() : newRequestId();
}

/** The request's server span when tracing, ended when the answer is done or the client left. */
function serverSpanOf(req: HttpRequest, res: HttpResponse, requestId: string) {
  const method = req.method ?? 'GET';
  const traced = startServerSpan(req.headers, method, {
    'http.request.method': method,
    'lagoon.request_id': requestId,
  });
  if (traced) res.once('close', () => traced.span.end());
  return traced;
}

/** Aborted when the client leaves before the answer is written out. */
function abortWhenClientGone(res: HttpResponse): AbortController {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller;
}

/** The route's caller; on a public route a bad key counts as no key, since it answers anyone. */
async function authenticate(services: Operations, ex: Exchange, route: Route): Promise<AuthContext> {
  try {
    return await services.auth.authenticate(ex.req.headers, ex.requestId);
  } catch (error) {
    if (route.access === 'public') return anonymous(ex.requestId);
    throw error;
  }
}

function methodNotAllowed(method: string, path: string, allowed: readonly string[]): Reply & { body: string } {
  const error = { error: `Method ${clip(method)} not allowed on ${clip(path)}`, code: 'METHOD_NOT_ALLOWED' };
  const headers = { 'content-type': JSON_TYPE_HEADER, allow: allowed.join(', ') };
  return { status: 405, headers, body: JSON.stringify(error) };
}

/** Writing an answer (whole, streamed or SSE), with its metrics and request-log line; the in-flight limit. */
function createResponder(logger: Logger, metrics: Metrics, config: Config) {
  const inFlight = inFlightLimit(config.http.maxInFlight);
  /** A 402 of the wallet flow: its body, and the x402 requirements base64-encoded in PAYMENT-REQUIRED. */
  function paymentRequired(body: object): Reply & { body: string } {
    const headers = { 'content-type': JSON_TYPE_HEADER, 'payment-required': paymentRequiredHeader(config.x402) };
    return { status: 402, headers, body: JSON.stringify(body) };
  }

  async function send(ex: Exchange, label: string, reply: Reply): Promise<void> {
    if ('body' in reply) return sendWhole(ex, label, reply);
    observe(ex, label, reply.status);
    ex.res.writeHead(reply.status, { ...reply.headers, ...ex.headers });
    if ('stream' in reply) return writeChunks(ex.res, ex.signal, reply.stream, reply.writeAheadBytes);
    return writeEvents(ex.res, ex.signal, reply.events.source, reply.events.toData, (error) =>
      logger.error({ reqId: ex.requestId, err: error, route: label }, 'stream failed'),
    );
  }

  /** A whole answer in one write, with its length. */
  function sendWhole(ex: Exchange, label: string, reply: Reply & { body: string | Uint8Array }): void {
    observe(ex, label, reply.status);
    if (ex.res.destroyed || ex.res.headersSent) return;
    const { body } = reply;
    ex.res.writeHead(reply.status, {
      ...reply.headers,
      ...ex.headers,
      'content-length': String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength),
    });
    ex.res.end(body);
  }

  /** Counts the request in flight until its answer ends; past the limit, answers the 503 at once and says no. */
  function admit(ex: Exchange): boolean {
    const overloaded = inFlight.admit(ex.req, ex.res);
    if (overloaded) sendWhole(ex, 'overloaded', errorReply(overloaded, ex.requestId));
    return !overloaded;
  }

  /** The answer's head: its metrics (the log line is written when the call ends, with what it was charged). */
  function observe(ex: Exchange, label: string, status: number): void {
    ex.label = label;
    ex.status = status;
    nameServerSpan(ex.span, ex.req.method ?? 'GET', label, status);
    metrics.observeRequest(ex.req.method ?? 'GET', label, status, (performance.now() - ex.started) / 1000);
  }

  /** A failure no handler caught: logged, and a 500 when the answer has not started (else the socket is cut). */
  function unhandled(ex: Exchange, error: unknown): void {
    logger.error({ reqId: ex.requestId, err: error }, 'unhandled error');
    if (ex.res.headersSent) ex.res.destroy();
    else sendWhole(ex, 'unmatched', errorReply(error, ex.requestId));
  }

  return { send, sendWhole, observe, paymentRequired, admit, inFlight, unhandled };
}

/**
 * One line per call, when it ends (a stream: when it was written out or the client left): request and trace ids,
 * caller, route or GraphQL operation, status, what it was charged and where it ran, and how long it took. The
 * fields are picked one by one: never a header, a secret or a body (docs/operations.md, Logs).
 */
function logCall(logger: Logger, ex: Exchange, callLog: CallLog): void {
  callLog.end(ex.requestId, ex.call);
  logger.info(
    {
      reqId: ex.requestId,
      traceId: ex.span?.spanContext().traceId ?? logTraceId(ex.req.headers.traceparent),
      method: ex.req.method ?? 'GET',
      route: ex.label,
      status: ex.status,
      ...callFields(ex.call),
      ms: Math.round(performance.now() - ex.started),
    },
    'request',
  );
}
