import type { ProviderBinding } from '../../catalog/model.ts';
import type { Logger } from '../../logger.ts';
import type { ProviderConfig } from '../../operator-config/schema.ts';
import { EngineSet } from '../engine-set.ts';
import type { EmbeddingEngine, EmbeddingRequest, EmbeddingResult, EmbeddingStream } from './embedding-engine.ts';
import { OPENAI_EMBEDDINGS_DEFAULT_TIMEOUT_MS, OpenAIEmbeddingsAdapter } from './openai-embeddings.adapter.ts';
import { SimulatorEmbeddingEngine } from './simulator-embedding.engine.ts';

/*
 * Which embedding engine serves a call (retries, fallback and cooldown: src/providers/engine-set.ts). Providers of
 * type `simulator` are the feature-hashing engine, `openai-compatible` ones a `/v1/embeddings` server.
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
  private readonly engines: EngineSet<EmbeddingEngine>;

  constructor(providers: readonly ProviderConfig[], logger?: Logger) {
    this.engines = new EngineSet('embedding', providers, engineFromConfig, logger);
  }

  async embed(
    bindings: readonly ProviderBinding[],
    request: EmbeddingRequest,
    options: { readonly signal?: AbortSignal | undefined },
  ): Promise<EmbeddingGatewayResult> {
    const { result, simulated, providerId } = await this.engines.run(bindings, options.signal, (engine, model) =>
      engine.embed(model, request, options),
    );
    return { ...result, simulated, providerId };
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
    const { result, simulated, providerId } = await this.engines.run(
      bindings,
      options.signal,
      (engine, model): Promise<EmbeddingResult | EmbeddingStream> =>
        engine.embedStream ? engine.embedStream(model, request, options) : engine.embed(model, request, options),
    );
    return 'batches' in result ? { stream: result, simulated, providerId } : { ...result, simulated, providerId };
  }

  close(): Promise<void> {
    return this.engines.close();
  }
}

function engineFromConfig(config: ProviderConfig): EmbeddingEngine | undefined {
  if (config.type === 'simulator') return new SimulatorEmbeddingEngine(config.id);
  if (config.type === 'openai-compatible' && config.baseUrl)
    return new OpenAIEmbeddingsAdapter(config.id, {
      baseUrl: config.baseUrl,
      apiKey: config.apiKey,
      timeoutMs: config.timeoutMs ?? OPENAI_EMBEDDINGS_DEFAULT_TIMEOUT_MS,
      headers: config.headers,
    });
  return undefined;
}
