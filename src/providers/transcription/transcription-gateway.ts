import type { ProviderBinding } from '../../catalog/model.ts';
import { UpstreamError } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import type { ProviderConfig } from '../../operator-config/schema.ts';
import { allowsFallback, cancelledError, describeFailure, isRetryable } from '../chat/upstream-errors.ts';
import { UpstreamHealth } from '../upstream-health.ts';
import { OPENAI_TRANSCRIPTION_DEFAULT_TIMEOUT_MS, OpenAITranscriptionAdapter } from './openai-transcription.adapter.ts';
import { SimulatorTranscriptionEngine } from './simulator-transcription.engine.ts';
import type { Transcript, TranscriptionEngine, TranscriptionRequest } from './transcription-engine.ts';

/*
 * Which transcription engine serves a call, as the embedding and speech gateways decide: the model's provider
 * bindings in order, `maxRetries` more attempts on a retryable failure, then the next; a caller's mistake ends the
 * call; an engine failing three times in a row goes last for `cooldownMs`. `simulator` providers are the built-in
 * (non-recognising) transcriber, `openai-compatible` ones a `/v1/audio/transcriptions` server.
 */

interface Entry {
  readonly engine: TranscriptionEngine;
  readonly maxRetries: number;
  readonly cooldownMs: number;
}

export class TranscriptionGateway {
  private readonly entries = new Map<string, Entry>();
  private readonly health = new UpstreamHealth({ failuresBeforeCooldown: 3, restartCountAfterCooldown: true });

  constructor(
    providers: readonly ProviderConfig[],
    private readonly logger?: Logger,
  ) {
    for (const config of providers) {
      const engine =
        config.type === 'simulator'
          ? new SimulatorTranscriptionEngine(config.id)
          : config.type === 'openai-compatible' && config.baseUrl
            ? new OpenAITranscriptionAdapter(config.id, {
                baseUrl: config.baseUrl,
                apiKey: config.apiKey,
                timeoutMs: config.timeoutMs ?? OPENAI_TRANSCRIPTION_DEFAULT_TIMEOUT_MS,
                headers: config.headers,
              })
            : undefined;
      if (engine)
        this.entries.set(config.id, {
          engine,
          maxRetries: config.maxRetries ?? 1,
          cooldownMs: config.cooldownMs ?? 30_000,
        });
    }
  }

  async transcribe(
    bindings: readonly ProviderBinding[],
    request: TranscriptionRequest,
    options: { readonly signal?: AbortSignal | undefined },
  ): Promise<Transcript & { readonly simulated: boolean }> {
    if (options.signal?.aborted) throw cancelledError();
    const known = bindings.flatMap((binding) => {
      const entry = this.entries.get(binding.providerId);
      return entry ? [{ binding, entry }] : [];
    });
    if (known.length === 0)
      throw new UpstreamError('No transcription engine is available for this model', 'SERVICE_UNAVAILABLE');
    let lastError: unknown;
    for (const { binding, entry } of this.health.healthyFirst(known, ({ binding }) => binding.providerId)) {
      for (let attempt = 0; ; attempt += 1) {
        try {
          const transcript = await entry.engine.transcribe(binding.upstreamModel, request, options);
          this.health.succeeded(binding.providerId);
          return { ...transcript, simulated: entry.engine.simulated };
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
        'transcription engine failed',
      );
    }
    throw lastError;
  }

  async close(): Promise<void> {
    await Promise.all([...this.entries.values()].map((entry) => entry.engine.close?.().catch(() => undefined)));
  }
}
