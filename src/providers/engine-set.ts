import type { ProviderBinding } from '../catalog/model.ts';
import { UpstreamError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { ProviderConfig } from '../operator-config/schema.ts';
import { allowsFallback, cancelledError, describeFailure, isRetryable } from './chat/upstream-errors.ts';
import { UpstreamHealth } from './upstream-health.ts';

/*
 * The engines of one capability (embeddings, transcription) by provider id, and the way a call picks one, as the
 * speech gateway does (src/providers/speech/speech-gateway.ts): a model's provider bindings in order, healthy ones
 * first; each gets `maxRetries` more attempts (default 1) on a retryable failure, then the next binding; a caller's
 * mistake or a cancellation ends the call at once; an engine that failed three times in a row goes last for
 * `cooldownMs` (default 30 s).
 */

export interface NamedEngine {
  readonly id: string;
  readonly simulated: boolean;
  close?(): Promise<void>;
}

interface Entry<E> {
  readonly engine: E;
  readonly maxRetries: number;
  readonly cooldownMs: number;
}

export class EngineSet<E extends NamedEngine> {
  private readonly entries = new Map<string, Entry<E>>();
  private readonly health = new UpstreamHealth({ failuresBeforeCooldown: 3, restartCountAfterCooldown: true });

  constructor(
    /** What the engines do, for messages and logs ("embedding", "transcription"). */
    private readonly what: string,
    providers: readonly ProviderConfig[],
    build: (config: ProviderConfig) => E | undefined,
    private readonly logger?: Logger,
  ) {
    for (const config of providers) {
      const engine = build(config);
      if (engine)
        this.entries.set(config.id, {
          engine,
          maxRetries: config.maxRetries ?? 1,
          cooldownMs: config.cooldownMs ?? 30_000,
        });
    }
  }

  /** `call` on the first engine of `bindings` that answers; the result says whether it was a simulator. */
  async run<T>(
    bindings: readonly ProviderBinding[],
    signal: AbortSignal | undefined,
    call: (engine: E, upstreamModel: string) => Promise<T>,
  ): Promise<{ result: T; simulated: boolean; providerId: string }> {
    if (signal?.aborted) throw cancelledError();
    const known = bindings.flatMap((binding) => {
      const entry = this.entries.get(binding.providerId);
      return entry ? [{ binding, entry }] : [];
    });
    if (known.length === 0)
      throw new UpstreamError(`No ${this.what} engine is available for this model`, 'SERVICE_UNAVAILABLE');
    let lastError: unknown;
    for (const { binding, entry } of this.health.healthyFirst(known, ({ binding }) => binding.providerId)) {
      for (let attempt = 0; ; attempt += 1) {
        try {
          const result = await call(entry.engine, binding.upstreamModel);
          this.health.succeeded(binding.providerId);
          return { result, simulated: entry.engine.simulated, providerId: binding.providerId };
        } catch (error) {
          if (signal?.aborted) throw cancelledError();
          if (!allowsFallback(error)) throw error;
          lastError = error;
          if (isRetryable(error) && attempt < entry.maxRetries) continue;
          break;
        }
      }
      this.health.failed(binding.providerId, entry.cooldownMs);
      this.logger?.warn(
        { provider: binding.providerId, failure: describeFailure(lastError) },
        `${this.what} engine failed`,
      );
    }
    throw lastError;
  }

  async close(): Promise<void> {
    await Promise.all([...this.entries.values()].map((entry) => entry.engine.close?.().catch(() => undefined)));
  }
}
