import type { ProviderBinding } from '../../catalog/model.ts';
import type { Logger } from '../../logger.ts';
import type { ProviderConfig } from '../../operator-config/schema.ts';
import { factoryOf } from '../registry.ts';
import { UpstreamPool, type UpstreamMetrics } from '../upstream-pool.ts';
import type { EmbeddingEngine, EmbeddingRequest, EmbeddingResult, EmbeddingStream } from './embedding-engine.ts';

/*
 * Which embedding engine serves a call (retries, fallback and cooldown: src/providers/upstream-pool.ts). Providers
 * of type `simulator` are the feature-hashing engine, `openai-compatible` ones a `/v1/embeddings` server.
 */

export interface EmbeddingGatewayResult extends EmbeddingResult {
  readonly providerId: string;
  readonly simulated: boolean;
}

export interface EmbeddingGatewayStream {
  readonly stream: EmbeddingStream;
  readonly providerId: string;
  readonly simulated: boolean;
}

export class EmbeddingGateway {
  private readonly pool: UpstreamPool<EmbeddingEngine>;

  constructor(providers: readonly ProviderConfig[], logger?: Logger, metrics?: UpstreamMetrics) {
    this.pool = new UpstreamPool({
      label: 'embedding engine',
      unavailable: 'No embedding engine is available for this model',
      logger,
      metrics,
    });
    this.pool.addProviders(providers, (config) => factoryOf(config, 'embeddings')?.(config));
  }

  async embed(
    bindings: readonly ProviderBinding[],
    request: EmbeddingRequest,
    options: { readonly signal?: AbortSignal | undefined },
  ): Promise<EmbeddingGatewayResult> {
    const { result, engine, providerId } = await this.pool.run(
      bindings,
      { operation: 'embeddings', signal: options.signal },
      (candidate, model) => candidate.embed(model, request, options),
    );
    return { ...result, simulated: engine.simulated, providerId };
  }

  /**
   * The same call, streamed where the engine can (an OpenAI-compatible server): retries and fallback cover the
   * call until its first vectors have come; engines that cannot stream (the simulator) answer whole.
   */
  async embedStreaming(
    bindings: readonly ProviderBinding[],
    request: EmbeddingRequest,
    options: { readonly signal?: AbortSignal | undefined },
  ): Promise<EmbeddingGatewayResult | EmbeddingGatewayStream> {
    const { result, engine, providerId } = await this.pool.run(
      bindings,
      { operation: 'embeddings', signal: options.signal },
      (candidate, model): Promise<EmbeddingResult | EmbeddingStream> =>
        candidate.embedStream
          ? candidate.embedStream(model, request, options)
          : candidate.embed(model, request, options),
    );
    const simulated = engine.simulated;
    return 'batches' in result ? { stream: result, simulated, providerId } : { ...result, simulated, providerId };
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
