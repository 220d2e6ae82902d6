import { subscribe } from 'node:diagnostics_channel';
import { readFile } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { PACKAGE_JSON } from '../runtime-files.ts';

/*
 * OpenTelemetry tracing, on only when an OTLP endpoint is configured (Config.tracing). Off, `tracer` stays undefined:
 * no SDK is loaded or registered, and every helper below checks that one variable first and does nothing else, so
 * no span, context or header is made on the hot path. On, spans go to the OTLP/HTTP exporter in batches; the SDK
 * reads the standard OTEL_* variables (endpoint, headers, service name, sampler, batch sizes) itself.
 *
 * What a span may carry is allow-listed (SpanAttributes): ids, names of routes, models and providers, counts and
 * outcomes; never a key, a secret, a prompt or a completion, and no error message (an upstream's may quote a
 * prompt), only the error's class or code.
 */

let tracer: Tracer | undefined;
/** The outgoing-request hook is added once per process (it does nothing while `tracer` is unset). */
let propagating = false;

/** Every attribute a Lagoon span may carry. */
export interface SpanAttributes {
  'http.request.method'?: string;
  'http.route'?: string;
  'http.response.status_code'?: number;
  'graphql.operation.type'?: string;
  'lagoon.graphql.field'?: string;
  'lagoon.request_id'?: string;
  'lagoon.auth.kind'?: string;
  'lagoon.billing.currency'?: string;
  'lagoon.billing.charged_nano'?: string;
  'lagoon.upstream.provider'?: string;
  'lagoon.upstream.operation'?: string;
  'lagoon.upstream.model'?: string;
  'lagoon.upstream.attempt'?: number;
  'lagoon.upstream.outcome'?: string;
  'lagoon.upstream.ttfb_ms'?: number;
  'lagoon.job.id'?: string;
  'lagoon.job.kind'?: string;
  'lagoon.job.attempt'?: number;
  'db.system.name'?: string;
  'db.operation.name'?: string;
  'error.type'?: string;
}

export interface Tracing {
  /** Exports the spans still buffered, then stops. */
  shutdown(): Promise<void>;
}

/** Whether spans are made (an OTLP endpoint is configured and startTracing ran). */
export const tracingOn = (): boolean => tracer !== undefined;

/**
 * Registers the SDK (context manager, W3C trace-context propagator, batch OTLP/HTTP exporter) and the outgoing-request
 * hook that passes the trace on to every upstream. Off (no endpoint): nothing is loaded, and undefined is returned.
 */
export async function startTracing(config: { enabled: boolean }): Promise<Tracing | undefined> {
  if (!config.enabled || tracer) return undefined;
  // Loaded only here: a process without tracing never pays for the SDK.
  const [base, otlp, hooks, core, resources] = await Promise.all([
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
  ]);
  const { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } = await import('@opentelemetry/semantic-conventions');
  const serviceVersion = (JSON.parse(await readFile(PACKAGE_JSON, 'utf8')) as { version: string }).version;
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) override the defaults.
  const resource = resources
    .resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'lagoon', [ATTR_SERVICE_VERSION]: serviceVersion })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new base.BasicTracerProvider({
    resource,
    spanProcessors: [new base.BatchSpanProcessor(new otlp.OTLPTraceExporter())],
  });
  context.setGlobalContextManager(new hooks.AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new core.W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  tracer = provider.getTracer('lagoon', serviceVersion);
  propagateToUpstreams();
  return {
    async shutdown() {
      tracer = undefined;
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

/** The trace id of the span running now (for the request log line), or undefined when there is none or tracing is off. */
export function activeTraceId(): string | undefined {
  if (!tracer) return undefined;
  return trace.getActiveSpan()?.spanContext().traceId;
}

/** Whether a span is running now (work done for a traced request or job, not a background timer's own). */
export function hasActiveSpan(): boolean {
  return tracer !== undefined && trace.getSpan(context.active()) !== undefined;
}

/**
 * Runs `work` in a child span of the span running now, ended when `work` ends (marked failed, with the error's class or
 * code, when it throws). Off: just `work(undefined)`.
 */
export function inSpan<T>(
  name: string,
  attributes: SpanAttributes | undefined,
  work: (span: Span | undefined) => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  if (!tracer) return work(undefined);
  return tracer.startActiveSpan(name, { kind, attributes: { ...attributes } }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** A span started now and ended by its owner (a stream's upstream call), with the context it is active in. */
export function startSpan(
  name: string,
  attributes: SpanAttributes,
  kind: SpanKind = SpanKind.INTERNAL,
): { span: Span; context: Context } | undefined {
  if (!tracer) return undefined;
  const span = tracer.startSpan(name, { kind, attributes: { ...attributes } });
  return { span, context: trace.setSpan(context.active(), span) };
}

/** Runs `work` with `active` as the current context (a span from startSpan); without one, just runs it. */
export function runIn<T>(active: { context: Context } | undefined, work: () => T): T {
  return active ? context.with(active.context, work) : work();
}

/** Adds allow-listed attributes to a span, if there is one. */
export function annotate(span: Span | undefined, attributes: SpanAttributes): void {
  span?.setAttributes({ ...attributes });
}

/** Marks a span failed with the error's code or class (never its message: an upstream's may quote a prompt). */
export function failSpan(span: Span | undefined, error: unknown): void {
  if (!span) return;
  const type = errorType(error);
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: type });
}

const errorType = (error: unknown): string => {
  if (error && typeof error === 'object') {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(code)) return code;
    const name = (error as { name?: unknown }).name;
    if (typeof name === 'string' && /^[A-Za-z0-9_]{1,64}$/.test(name)) return name;
  }
  return 'Error';
};

/**
 * The server span of an incoming request, a child of the caller's `traceparent` (and `tracestate`) when it sent one;
 * named by its method until the route is known (nameServerSpan). Undefined when tracing is off.
 */
export function startServerSpan(
  headers: IncomingHttpHeaders,
  method: string,
  attributes: SpanAttributes = {},
): { span: Span; context: Context } | undefined {
  if (!tracer) return undefined;
  const parent = headers.traceparent === undefined ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, headers);
  const span = tracer.startSpan(method, { kind: SpanKind.SERVER, attributes: { ...attributes } }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/**
 * A server span around work that is not an HTTP request of its own (an operation on a GraphQL WebSocket), a child of
 * the trace in `headers` (the upgrade request's), ended when `work` settles.
 */
export function inServerSpan<T>(headers: IncomingHttpHeaders, name: string, work: () => Promise<T>): Promise<T> {
  const traced = startServerSpan(headers, name);
  if (!traced) return work();
  return context.with(traced.context, async () => {
    try {
      return await work();
    } catch (error) {
      failSpan(traced.span, error);
      throw error;
    } finally {
      traced.span.end();
    }
  });
}

/** GraphQL operations name their server span themselves (graphql-tracing.ts); the route label does not replace it. */
const operationNames = new WeakMap<Span, string>();

/**
 * Names a server span by its low-cardinality route (`POST /api/v1/chat/completions`; a label without the method gets
 * it in front) and records the status.
 */
export function nameServerSpan(span: Span | undefined, method: string, label: string, status: number): void {
  if (!span) return;
  const route = label.startsWith(`${method} `) ? label.slice(method.length + 1) : label;
  span.updateName(operationNames.get(span) ?? `${method} ${route}`);
  span.setAttributes({ 'http.route': route, 'http.response.status_code': status });
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
}

/** Names the server span running now by its GraphQL operation (`mutation chatCompletion`). */
export function nameOperation(type: string, field: string | undefined): void {
  if (!tracer) return;
  const span = trace.getActiveSpan();
  if (!span) return;
  const name = field ? `${type} ${field}` : type;
  operationNames.set(span, name);
  span.updateName(name);
  span.setAttributes({ 'graphql.operation.type': type, ...(field ? { 'lagoon.graphql.field': field } : {}) });
}

/** What carries the trace into stored work (a queued job): `traceparent` and `tracestate`, or nothing when off. */
export interface TraceCarrier {
  traceparent?: string;
  tracestate?: string;
}

/** The running trace as a carrier to store with work that runs later (a job's queue entry); {} when off. */
export function traceCarrier(): TraceCarrier {
  if (!tracer) return {};
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent
    ? { traceparent: carrier.traceparent, ...(carrier.tracestate ? { tracestate: carrier.tracestate } : {}) }
    : {};
}

/** Runs stored work in a span whose parent is the trace it was stored with (see traceCarrier). */
export function continueTrace<T>(
  carrier: TraceCarrier,
  name: string,
  attributes: SpanAttributes,
  work: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!tracer) return work(undefined);
  const stored: Record<string, string> = {};
  if (typeof carrier.traceparent === 'string') stored.traceparent = carrier.traceparent;
  if (typeof carrier.tracestate === 'string') stored.tracestate = carrier.tracestate;
  const parent = propagation.extract(ROOT_CONTEXT, stored);
  return context.with(parent, () => inSpan(name, attributes, work, SpanKind.CONSUMER));
}

/** The part of undici's request object its `undici:request:create` channel gives (Node's fetch and the npm undici). */
interface UndiciRequest {
  addHeader?(name: string, value: string): unknown;
}

/**
 * Passes the running trace on to every outgoing HTTP request made with fetch or undici (every upstream: chat, media,
 * search, scrape, JSON-RPC, job engines): undici publishes each request it creates, synchronously in the caller's
 * context, and the W3C headers are added to it there.
 */
function propagateToUpstreams(): void {
  if (propagating) return;
  propagating = true;
  subscribe('undici:request:create', (message) => {
    if (!tracer) return;
    const { request } = message as { request?: UndiciRequest };
    if (typeof request?.addHeader !== 'function') return;
    const headers: Record<string, string> = {};
    propagation.inject(context.active(), headers);
    for (const [name, value] of Object.entries(headers)) request.addHeader(name, value);
  });
}

export { SpanKind };
export type { Span };
