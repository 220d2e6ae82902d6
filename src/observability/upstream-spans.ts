import type { Context } from '@opentelemetry/api';
import { SpanKind, failSpan, startSpan, type Span } from './tracing.ts';

/*
 * The client span of each upstream attempt (src/providers/upstream-pool.ts): provider, operation, upstream model,
 * attempt number and outcome. The outgoing request made inside it carries its traceparent (tracing.ts). A streamed
 * call's span stays open past its first chunk, whose time it records (`lagoon.upstream.ttfb_ms` and a `first byte`
 * event), and is ended by whoever reads the stream (endUpstreamStream).
 */

export interface AttemptTrace {
  readonly span: Span;
  readonly context: Context;
  readonly started: number;
}

export function startAttempt(
  operation: string,
  provider: string,
  model: string,
  attempt: number,
): AttemptTrace | undefined {
  const started = startSpan(
    `upstream ${operation}`,
    {
      'lagoon.upstream.operation': operation,
      'lagoon.upstream.provider': provider,
      'lagoon.upstream.model': model,
      'lagoon.upstream.attempt': attempt,
    },
    SpanKind.CLIENT,
  );
  return started && { ...started, started: performance.now() };
}

/** The attempt answered: a whole call's span ends; a stream's (first chunk in) records its time and stays open. */
export function attemptAnswered(trace: AttemptTrace | undefined, streamed: boolean): Span | undefined {
  if (!trace) return undefined;
  const { span } = trace;
  span.setAttribute('lagoon.upstream.outcome', 'ok');
  if (!streamed) {
    span.end();
    return undefined;
  }
  span.setAttribute('lagoon.upstream.ttfb_ms', Math.round(performance.now() - trace.started));
  span.addEvent('first byte');
  return span;
}

export function attemptFailed(trace: AttemptTrace | undefined, error: unknown, outcome: string): void {
  if (!trace) return;
  trace.span.setAttribute('lagoon.upstream.outcome', outcome);
  failSpan(trace.span, error);
  trace.span.end();
}

/** A stream's upstream span ends with the stream: read to its end, broken (`error`), or cancelled. */
export function endUpstreamStream(span: Span | undefined, error?: unknown): void {
  if (!span) return;
  if (error !== undefined) {
    span.setAttribute('lagoon.upstream.outcome', 'broken');
    failSpan(span, error);
  }
  span.end();
}
