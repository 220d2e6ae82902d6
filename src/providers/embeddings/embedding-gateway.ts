import type { ProviderBinding } from '../../catalog/model.ts';
import { UpstreamError } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import type { ProviderConfig } from '../../operator-config/schema.ts';
import { allowsFallback, cancelledError, describeFailure, isRetryable } from '../chat/upstream-errors.ts';
import { UpstreamHealth } from '../upstream-health.ts';
import type { EmbeddingEngine, EmbeddingRequest, EmbeddingResult } from './embedding-engine.ts';
import { OPENAI_EMBEDDINGS_DEFAULT_TIMEOUT_MS, OpenAIEmbeddingsAdapter } from './openai-embeddings.adapter.ts';
import { SimulatorEmbeddingEngine } from './simulator-embedding.engine.ts';

/*
 * Which embedding engine serves a call, as the speech gateway decides (src/providers/speech/speech-gateway.ts): a
 * model's provider bindings in order, each with up to `maxRetries` more attempts on a retryable failure, then the
 * next; a caller's mistake ends the call at once; an engine that failed three times in a row goes last for
 * `cooldownMs`. Providers of type `simulator` are the feature-hashing engine, `openai-compatible` ones a
 * `/v1/embeddings` server.
 */

const DEFAULTS = { maxRetries: 1, cooldownMs: 30_000 } as const;

interface Entry {
  readonly engine: EmbeddingEngine;
  readonly maxRetries: number;
  readonly cooldownMs: number;
}

export interface EmbeddingGatewayResult extends EmbeddingResult {
  readonly providerId: string;
  readonly simulated: boolean;
}

export class EmbeddingGateway {
  private readonly entries = new Map<string, Entry>();
  private readonly health = new UpstreamHealth({ failuresBeforeCooldown: 3, restartCountAfterCooldown: true });

  constructor(
    providers: readonly ProviderConfig[],
    private readonly logger?: Logger,
  ) {
    for (const config of providers) {
      const engine = engineFromConfig(config);
      if (engine)
        this.entries.set(config.id, {
          engine,
          maxRetries: config.maxRetries ?? DEFAULTS.maxRetries,
          cooldownMs: config.cooldownMs ?? DEFAULTS.cooldownMs,
        });
    }
  }

  /** Whether the first engine that would serve these bindings is the simulator. */
  simulated(bindings: readonly ProviderBinding[]): boolean {
    const first = bindings.map((binding) => this.entries.get(binding.providerId)).find(Boolean);
    return first?.engine.simulated ?? false;
  }

  async embed(
    bindings: readonly ProviderBinding[],
    request: EmbeddingRequest,
    options: { readonly signal?: AbortSignal | undefined },
  ): Promise<EmbeddingGatewayResult> {
    if (options.signal?.aborted) throw cancelledError();
    const known = bindings.flatMap((binding) => {
      const entry = this.entries.get(binding.providerId);
      return entry ? [{ binding, entry }] : [];
    });
    if (known.length === 0)
      throw new UpstreamError('No embedding engine is available for this model', 'SERVICE_UNAVAILABLE');
    let lastError: unknown;
    for (const { binding, entry } of this.health.healthyFirst(known, ({ binding }) => binding.providerId)) {
      for (let attempt = 0; ; attempt += 1) {
        try {
          const result = await entry.engine.embed(binding.upstreamModel, request, options);
          this.health.succeeded(binding.providerId);
          return { ...result, providerId: binding.providerId, simulated: entry.engine.simulated };
        } catch (error) {
          if (options.signal?.aborted) throw cancelledError();
          if (!allowsFallback(error)) throw error;
          lastError = error;
          if (isRetryable(error) && attempt < entry.maxRetries) continue;
          break;
        }
      }
      this.health.failed(binding.providerId, entry.cooldownMs);
      this.logger?.warn(
        { provider: binding.providerId, failure: describeFailure(lastError) },
        'embedding engine failed',
      );
    }
    throw lastError;
  }

  async close(): Promise<void> {
    await Promise.all([...this.entries.values()].map((entry) => entry.engine.close?.().catch(() => undefined)));
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
