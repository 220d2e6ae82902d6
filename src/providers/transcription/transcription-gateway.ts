import type { ProviderBinding } from '../../catalog/model.ts';
import type { Logger } from '../../logger.ts';
import type { ProviderConfig } from '../../operator-config/schema.ts';
import { factoryOf } from '../registry.ts';
import { UpstreamPool, type UpstreamMetrics } from '../upstream-pool.ts';
import type { Transcript, TranscriptionEngine, TranscriptionRequest } from './transcription-engine.ts';

/*
 * Which transcription engine serves a call (retries, fallback and cooldown: src/providers/upstream-pool.ts).
 * `simulator` providers are the built-in (non-recognising) transcriber, `openai-compatible` ones a
 * `/v1/audio/transcriptions` server.
 */

export class TranscriptionGateway {
  private readonly pool: UpstreamPool<TranscriptionEngine>;

  constructor(providers: readonly ProviderConfig[], logger?: Logger, metrics?: UpstreamMetrics) {
    this.pool = new UpstreamPool({
      label: 'transcription engine',
      unavailable: 'No transcription engine is available for this model',
      logger,
      metrics,
    });
    this.pool.addProviders(providers, (config) => factoryOf(config, 'transcription')?.(config));
  }

  async transcribe(
    bindings: readonly ProviderBinding[],
    request: TranscriptionRequest,
    options: { readonly signal?: AbortSignal | undefined },
  ): Promise<Transcript & { readonly simulated: boolean; readonly providerId: string }> {
    const { result, engine, providerId } = await this.pool.run(
      bindings,
      { operation: 'transcription', signal: options.signal },
      (candidate, model) => candidate.transcribe(model, request, options),
    );
    return { ...result, simulated: engine.simulated, providerId };
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
