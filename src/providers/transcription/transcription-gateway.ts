import type { ProviderBinding } from '../../catalog/model.ts';
import type { Logger } from '../../logger.ts';
import type { ProviderConfig } from '../../operator-config/schema.ts';
import { EngineSet } from '../engine-set.ts';
import { OPENAI_TRANSCRIPTION_DEFAULT_TIMEOUT_MS, OpenAITranscriptionAdapter } from './openai-transcription.adapter.ts';
import { SimulatorTranscriptionEngine } from './simulator-transcription.engine.ts';
import type { Transcript, TranscriptionEngine, TranscriptionRequest } from './transcription-engine.ts';

/*
 * Which transcription engine serves a call (retries, fallback and cooldown: src/providers/engine-set.ts).
 * `simulator` providers are the built-in (non-recognising) transcriber, `openai-compatible` ones a
 * `/v1/audio/transcriptions` server.
 */

export class TranscriptionGateway {
  private readonly engines: EngineSet<TranscriptionEngine>;

  constructor(providers: readonly ProviderConfig[], logger?: Logger) {
    this.engines = new EngineSet('transcription', providers, engineFromConfig, logger);
  }

  async transcribe(
    bindings: readonly ProviderBinding[],
    request: TranscriptionRequest,
    options: { readonly signal?: AbortSignal | undefined },
  ): Promise<Transcript & { readonly simulated: boolean }> {
    const { result, simulated } = await this.engines.run(bindings, options.signal, (engine, model) =>
      engine.transcribe(model, request, options),
    );
    return { ...result, simulated };
  }

  close(): Promise<void> {
    return this.engines.close();
  }
}

function engineFromConfig(config: ProviderConfig): TranscriptionEngine | undefined {
  if (config.type === 'simulator') return new SimulatorTranscriptionEngine(config.id);
  if (config.type === 'openai-compatible' && config.baseUrl)
    return new OpenAITranscriptionAdapter(config.id, {
      baseUrl: config.baseUrl,
      apiKey: config.apiKey,
      timeoutMs: config.timeoutMs ?? OPENAI_TRANSCRIPTION_DEFAULT_TIMEOUT_MS,
      headers: config.headers,
    });
  return undefined;
}
