import { UpstreamError } from '../errors.ts';
import type { ProviderBinding } from '../catalog/model.ts';
import type { Logger } from '../logger.ts';
import { runIn, type Span } from '../observability/tracing.ts';
import { attemptAnswered, attemptFailed, startAttempt } from '../observability/upstream-spans.ts';
import type { ProviderConfig } from '../operator-config/schema.ts';
import { Backoff } from './backoff.ts';
import { allowsFallback, cancelledError, describeFailure, isRetryable } from './upstream-errors.ts';
import { UpstreamHealth } from './upstream-health.ts';

/*
 * How every gateway (chat, image, speech, embeddings, transcription, jobs) picks the engine that serves a call:
 * - order: a model's provider bindings in order; a provider whose calls failed FAILURES_BEFORE_COOLDOWN times in
 *   a row is skipped for its `cooldownMs`, unless every provider of the model is cooling down;
 * - retry: each provider gets up to `maxRetries` more attempts on a retryable failure (connection error, 5xx,
 *   429, timeout), after a pause that grows with each retry and is jittered (backoff.ts); then the next binding;
 * - abort: a caller's mistake (any error that is not an UpstreamError) ends the call at once, and so does the
 *   caller's abort, before an attempt, after a failed one or during a pause (as a cancellation). An answer that
 *   came back is returned even when the caller left meanwhile: what a late answer costs is the service's rule;
 * - metrics: every attempt is counted with its outcome and duration.
 * Health is per process and only an optimisation of the order of attempts.
 */

export const FAILURES_BEFORE_COOLDOWN = 3;
/** A provider's `maxRetries` and `cooldownMs` when its config does not set them. */
export const UPSTREAM_DEFAULTS = { maxRetries: 1, cooldownMs: 30_000 } as const;

/** How one upstream call ended, as the metrics count it (`broken`: a stream that stopped after it started). */
export type UpstreamOutcome = 'ok' | 'timeout' | 'error' | 'rejected' | 'cancelled' | 'broken';

/** Where upstream calls are counted (src/metrics.ts implements it). */
export interface UpstreamMetrics {
  /** `failure`: what went wrong, in words (a failed attempt only). */
  observeUpstream(
    provider: string,
    operation: string,
    outcome: UpstreamOutcome,
    seconds: number,
    failure?: string,
  ): void;
  /** A provider started a cooldown until `until` (epoch ms), or ended it with a success (null). */
  observeCooldown?(provider: string, until: number | null): void;
  /** A provider failed a call and the next provider of the model gets it. */
  observeFallback?(provider: string, operation: string): void;
}

export interface PoolEngine {
  readonly id: string;
  close?(): Promise<void>;
}

/** An engine with its provider's retry and cooldown settings. */
export interface PoolMember<E> {
  readonly engine: E;
  readonly maxRetries: number;
  readonly cooldownMs: number;
}

export interface UpstreamPoolOptions {
  /** What the engines are, in logs ("chat upstream", "speech engine"). */
  readonly label: string;
  /** The 503's message when no binding of a model has an engine here (names no provider). */
  readonly unavailable: string;
  readonly logger?: Logger | undefined;
  readonly metrics?: UpstreamMetrics | undefined;
  readonly now?: () => number;
  readonly backoff?: Backoff;
}

export interface PoolCall<E> {
  /** The metrics' operation label ("chat", "image_generate", "speech"). */
  readonly operation: string;
  readonly signal?: AbortSignal | undefined;
  /** Only these engines may take the call (e.g. those that can edit); none of the model's: `ineligible()`. */
  readonly eligible?: (engine: E) => boolean;
  readonly ineligible?: () => Error;
  /** The answer is a stream: its trace span stays open (PoolAnswer.span) for the reader to end. */
  readonly streamed?: boolean;
}

/** Which binding answered, with its engine and its answer. */
export interface PoolAnswer<E, T> {
  readonly providerId: string;
  readonly upstreamModel: string;
  readonly engine: E;
  readonly result: T;
  /** A streamed call's open upstream span, when tracing (end it with endUpstreamStream). */
  readonly span?: Span | undefined;
}

export class UpstreamPool<E extends PoolEngine> {
  private readonly members = new Map<string, PoolMember<E>>();
  private readonly health: UpstreamHealth;
  private readonly now: () => number;
  private readonly backoff: Backoff;

  constructor(private readonly options: UpstreamPoolOptions) {
    this.now = options.now ?? Date.now;
    this.health = new UpstreamHealth(
      { failuresBeforeCooldown: FAILURES_BEFORE_COOLDOWN, restartCountAfterCooldown: true },
      this.now,
    );
    this.backoff = options.backoff ?? new Backoff();
  }

  /** Adds (or replaces) the engine of a provider id. */
  add(member: PoolMember<E>, providerId: string = member.engine.id): void {
    this.members.set(providerId, member);
  }

  /** A member for each provider that `make` builds an engine of this role for, with the provider's retries. */
  addProviders(providers: readonly ProviderConfig[], make: (config: ProviderConfig) => E | undefined): void {
    for (const config of providers) {
      const engine = make(config);
      if (engine) this.add({ engine, ...retriesOf(config) }, config.id);
    }
  }

  has(providerId: string): boolean {
    return this.members.has(providerId);
  }

  get(providerId: string): PoolMember<E> | undefined {
    return this.members.get(providerId);
  }

  /** The engines of the bindings that have one here, in binding order. */
  known(bindings: readonly ProviderBinding[]): { binding: ProviderBinding; member: PoolMember<E> }[] {
    return bindings.flatMap((binding) => {
      const member = this.members.get(binding.providerId);
      return member ? [{ binding, member }] : [];
    });
  }

  /** `call` on the first engine of `bindings` that answers, by the rules above. */
  async run<T>(
    bindings: readonly ProviderBinding[],
    request: PoolCall<E>,
    call: (engine: E, upstreamModel: string) => Promise<T> | T,
  ): Promise<PoolAnswer<E, T>> {
    const { signal, eligible } = request;
    if (signal?.aborted) throw cancelledError();
    const known = this.known(bindings);
    if (known.length === 0) throw new UpstreamError(this.options.unavailable, 'SERVICE_UNAVAILABLE');
    const able = eligible ? known.filter(({ member }) => eligible(member.engine)) : known;
    if (able.length === 0)
      throw request.ineligible?.() ?? new UpstreamError(this.options.unavailable, 'SERVICE_UNAVAILABLE');
    const now = this.now();
    const ready = able.filter(({ binding }) => !this.health.cooling(binding.providerId, now));

    let lastError: unknown;
    const order = ready.length > 0 ? ready : able;
    for (const [index, { binding, member }] of order.entries()) {
      for (let retry = 0; ; retry += 1) {
        const started = performance.now();
        const traced = startAttempt(request.operation, binding.providerId, binding.upstreamModel, retry);
        try {
          const result = await runIn(traced, () => call(member.engine, binding.upstreamModel));
          const span = attemptAnswered(traced, request.streamed === true);
          this.observe(binding.providerId, request.operation, 'ok', started);
          if (this.health.cooling(binding.providerId))
            this.options.metrics?.observeCooldown?.(binding.providerId, null);
          this.health.succeeded(binding.providerId);
          return {
            providerId: binding.providerId,
            upstreamModel: binding.upstreamModel,
            engine: member.engine,
            result,
            span,
          };
        } catch (error) {
          attemptFailed(traced, error, outcomeOf(error, signal));
          this.observe(binding.providerId, request.operation, outcomeOf(error, signal), started, error);
          if (signal?.aborted) throw cancelledError();
          if (!allowsFallback(error)) throw error;
          lastError = error;
          if (isRetryable(error) && retry < member.maxRetries && (await this.backoff.pause(retry, signal))) continue;
          if (signal?.aborted) throw cancelledError();
          break;
        }
      }
      this.failed(binding.providerId);
      this.options.logger?.warn(
        { provider: binding.providerId, failure: describeFailure(lastError) },
        `${this.options.label} failed`,
      );
      if (index < order.length - 1) this.options.metrics?.observeFallback?.(binding.providerId, request.operation);
    }
    throw lastError;
  }

  /** Records a failed call of a provider (also one that broke after it answered, like a stream). */
  failed(providerId: string): void {
    const cooldownMs = this.members.get(providerId)?.cooldownMs ?? UPSTREAM_DEFAULTS.cooldownMs;
    if (this.health.failed(providerId, cooldownMs)) {
      this.options.metrics?.observeCooldown?.(providerId, this.now() + cooldownMs);
      this.options.logger?.warn(
        { provider: providerId, cooldownMs },
        `${this.options.label} cooling down after repeated failures`,
      );
    }
  }

  /** Counts one call that did not go through run (a model list, a stream's break). */
  observe(providerId: string, operation: string, outcome: UpstreamOutcome, started: number, error?: unknown): void {
    const seconds = outcome === 'broken' ? 0 : (performance.now() - started) / 1000;
    const failure = outcome === 'ok' ? undefined : error === undefined ? outcome : failureText(error);
    this.options.metrics?.observeUpstream(providerId, operation, outcome, seconds, failure);
  }

  /** Closes every engine (their HTTP connection pools); a failing close does not stop the others. */
  async close(): Promise<void> {
    await Promise.all([...this.members.values()].map((member) => member.engine.close?.().catch(() => undefined)));
  }
}

const failureText = (error: unknown): string => {
  const { code, message } = describeFailure(error);
  return [code, message].filter((part) => typeof part === 'string' && part !== '').join(': ');
};

/** A provider's retry and cooldown settings, its config's or the defaults. */
export function retriesOf(config: ProviderConfig): { maxRetries: number; cooldownMs: number } {
  return {
    maxRetries: config.maxRetries ?? UPSTREAM_DEFAULTS.maxRetries,
    cooldownMs: config.cooldownMs ?? UPSTREAM_DEFAULTS.cooldownMs,
  };
}

/** A failed call's outcome: the caller's abort, a timeout, an upstream fault, or a refusal of the request itself. */
export function outcomeOf(error: unknown, signal: AbortSignal | undefined): Exclude<UpstreamOutcome, 'ok' | 'broken'> {
  if (signal?.aborted) return 'cancelled';
  if (!(error instanceof UpstreamError)) return 'rejected';
  return error.code === 'REQUEST_TIMEOUT' ? 'timeout' : 'error';
}
