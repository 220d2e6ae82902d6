import { UpstreamError } from '../../errors.ts';
import type { ProviderBinding } from '../../catalog/model.ts';
import type { Logger } from '../../logger.ts';
import type { ProviderConfig } from '../../operator-config/schema.ts';
import type { Backoff } from '../backoff.ts';
import { factoryOf } from '../registry.ts';
import { UpstreamPool, type PoolMember, type UpstreamMetrics } from '../upstream-pool.ts';
import { EspeakPool } from './espeak-pool.ts';
import type { SpeechAudio, SpeechCallOptions, SpeechEngine, SpeechRequest } from './speech-engine.ts';

/*
 * Which speech engine serves a call: the upstream pool's rules (src/providers/upstream-pool.ts), retried only
 * before any audio; a cloned voice only goes to engines that can clone. Providers of type `simulator` are the
 * built-in eSpeak NG engine (all of them on one thread pool), `openai-compatible` ones an OpenAI-compatible
 * speech server.
 */

export type SpeechEngineEntry = PoolMember<SpeechEngine>;

export interface SpeechGatewayDeps {
  readonly providers: readonly ProviderConfig[];
  readonly logger?: Logger | undefined;
  readonly metrics?: UpstreamMetrics | undefined;
  /** Ready-made engines (tests), added after the configured ones (replacing one with the same id). */
  readonly extra?: readonly SpeechEngineEntry[];
  /** eSpeak NG threads shared by every built-in engine (default: up to 2). */
  readonly espeakThreads?: number | undefined;
  /** Built-in speech calls in flight at most, past which a call is refused with 503 (default: 4 per thread). */
  readonly espeakMaxCalls?: number | undefined;
  readonly backoff?: Backoff;
}

export interface SpeechGatewayResult {
  readonly providerId: string;
  readonly upstreamModel: string;
  readonly audio: SpeechAudio;
}

export class SpeechGateway {
  private readonly pool: UpstreamPool<SpeechEngine>;
  private espeak: EspeakPool | undefined;

  constructor(private readonly deps: SpeechGatewayDeps) {
    this.pool = new UpstreamPool({
      label: 'speech engine',
      unavailable: 'No speech engine is available for this model',
      logger: deps.logger,
      metrics: deps.metrics,
      backoff: deps.backoff,
    });
    const shared = {
      espeak: () => (this.espeak ??= new EspeakPool({ size: deps.espeakThreads, maxCalls: deps.espeakMaxCalls })),
    };
    this.pool.addProviders(deps.providers, (config) => factoryOf(config, 'speech')?.(config, shared));
    for (const entry of deps.extra ?? []) this.add(entry);
  }

  /** Adds (or replaces) an engine under its id. */
  add(entry: SpeechEngineEntry): void {
    this.pool.add(entry);
  }

  /** The engine that serves a model first (its primary binding that has an engine), if any. */
  primary(bindings: readonly ProviderBinding[]): SpeechEngine | undefined {
    return this.pool.known(bindings)[0]?.member.engine;
  }

  /** Resolves once an engine's first audio can be read; later failures come from the chunks. */
  async synthesize(
    bindings: readonly ProviderBinding[],
    request: SpeechRequest,
    options: SpeechCallOptions,
  ): Promise<SpeechGatewayResult> {
    const cloned = typeof request.voice !== 'string';
    const { providerId, upstreamModel, result } = await this.pool.run(
      bindings,
      {
        operation: 'speech',
        signal: options.signal,
        eligible: (engine) => !cloned || engine.canClone,
        ineligible: () =>
          new UpstreamError('No speech engine of this model can use cloned voices', 'SERVICE_UNAVAILABLE'),
      },
      (engine, model) => engine.synthesize(model, request, options),
    );
    return { providerId, upstreamModel, audio: result };
  }

  async close(): Promise<void> {
    await this.pool.close();
    await this.espeak?.close();
  }
}
