import { UpstreamError, ValidationError } from '../../errors.ts';
import type { ProviderBinding } from '../../catalog/model.ts';
import type { Logger } from '../../logger.ts';
import type { ProviderConfig } from '../../operator-config/schema.ts';
import type { Backoff } from '../backoff.ts';
import { factoryOf } from '../registry.ts';
import { allowsFallback } from '../upstream-errors.ts';
import { UpstreamPool, outcomeOf, type UpstreamMetrics } from '../upstream-pool.ts';
import type {
  ChatCallOptions,
  ChatEngine,
  UpstreamChatChunk,
  UpstreamChatCompletion,
  UpstreamChatRequest,
  UpstreamChatStream,
} from './chat-engine.ts';
import type { Span } from '../../observability/tracing.ts';
import { endUpstreamStream } from '../../observability/upstream-spans.ts';

/*
 * Which chat upstream serves a call: the upstream pool's rules (src/providers/upstream-pool.ts), retried only
 * before any output; a stream that breaks after its first chunk counts as a failure of its provider.
 */

export type { UpstreamMetrics, UpstreamOutcome } from '../upstream-pool.ts';

/** A ready-made provider with its retry and cooldown settings. */
export interface ChatEngineEntry {
  readonly provider: ChatEngine;
  readonly maxRetries: number;
  readonly cooldownMs: number;
}

export interface ChatGatewayDeps {
  /** The effective operator config's providers, env shortcuts included (types without a chat engine are ignored). */
  readonly providers: readonly ProviderConfig[];
  readonly logger?: Logger | undefined;
  readonly metrics?: UpstreamMetrics | undefined;
  /** Ready-made providers (tests), added after the configured ones. */
  readonly extra?: readonly ChatEngineEntry[];
  readonly now?: () => number;
  readonly backoff?: Backoff;
}

export interface GatewayResult {
  readonly providerId: string;
  readonly upstreamModel: string;
}

export class ChatGateway {
  private readonly pool: UpstreamPool<ChatEngine>;

  constructor(deps: ChatGatewayDeps) {
    this.pool = new UpstreamPool({
      label: 'chat upstream',
      unavailable: 'No model server is available for this model',
      logger: deps.logger,
      metrics: deps.metrics,
      now: deps.now,
      backoff: deps.backoff,
    });
    this.pool.addProviders(deps.providers, (config) => factoryOf(config, 'chat')?.(config));
    for (const { provider, ...retries } of deps.extra ?? []) this.pool.add({ engine: provider, ...retries });
  }

  has(providerId: string): boolean {
    return this.pool.has(providerId);
  }

  async complete(
    bindings: readonly ProviderBinding[],
    body: Omit<UpstreamChatRequest, 'model'>,
    options: ChatCallOptions,
  ): Promise<GatewayResult & { completion: UpstreamChatCompletion }> {
    const { providerId, upstreamModel, result } = await this.pool.run(
      bindings,
      { operation: 'chat', signal: options.signal },
      (provider, model) => provider.complete(withModel(body, model), options),
    );
    return { providerId, upstreamModel, completion: result };
  }

  /** Resolves once a provider's stream started (its first chunk arrived); later failures come from the iterator. */
  async stream(
    bindings: readonly ProviderBinding[],
    body: Omit<UpstreamChatRequest, 'model'>,
    options: ChatCallOptions,
  ): Promise<GatewayResult & { stream: UpstreamChatStream }> {
    const { providerId, upstreamModel, result, span } = await this.pool.run(
      bindings,
      { operation: 'chat_stream', signal: options.signal, streamed: true },
      (provider, model) => provider.stream(withModel(body, model), options),
    );
    const stream = watchedStream(
      result,
      () => {
        this.pool.failed(providerId);
        this.pool.observe(providerId, 'chat_stream', 'broken', 0);
      },
      span,
    );
    return { providerId, upstreamModel, stream };
  }

  /** The upstream's model ids, for discovery; throws when the provider is unknown or has no model list. */
  async listModels(providerId: string, signal?: AbortSignal): Promise<string[]> {
    const provider = this.pool.get(providerId)?.engine;
    if (!provider?.listModels) throw new UpstreamError('This provider cannot list its models', 'SERVICE_UNAVAILABLE');
    const started = performance.now();
    try {
      const models = await provider.listModels(signal ? { signal } : {});
      this.pool.observe(providerId, 'models', 'ok', started);
      return models;
    } catch (error) {
      this.pool.observe(providerId, 'models', outcomeOf(error, signal), started);
      throw error;
    }
  }

  /** Closes the HTTP connection pools. */
  close(): Promise<void> {
    return this.pool.close();
  }
}

/** The upstream body: the service's body with the upstream model name. */
function withModel(body: Omit<UpstreamChatRequest, 'model'>, model: string): UpstreamChatRequest {
  const messages = body.messages;
  if (!Array.isArray(messages)) throw new ValidationError('messages: expected an array');
  return { ...body, model, messages: messages as UpstreamChatRequest['messages'] };
}

/** The stream as it is, with its breaks counted. A plain iterator: an async generator costs more on every chunk. */
function watchedStream(inner: UpstreamChatStream, onBreak: () => void, span: Span | undefined): UpstreamChatStream {
  return {
    cancel: () => {
      endUpstreamStream(span);
      return inner.cancel();
    },
    [Symbol.asyncIterator](): AsyncIterator<UpstreamChatChunk> {
      const chunks = inner[Symbol.asyncIterator]();
      return {
        next: async () => {
          try {
            const next = await chunks.next();
            if (next.done) endUpstreamStream(span);
            return next;
          } catch (error) {
            endUpstreamStream(span, error);
            if (error instanceof UpstreamError && allowsFallback(error)) onBreak();
            throw error;
          }
        },
        return: async () => {
          endUpstreamStream(span);
          return (await chunks.return?.()) ?? { done: true, value: undefined };
        },
      };
    },
  };
}
