import { UpstreamError } from '../../errors.ts';
import type { ProviderBinding } from '../../catalog/model.ts';
import type { Logger } from '../../logger.ts';
import type { ProviderConfig } from '../../operator-config/schema.ts';
import { UpstreamHealth } from '../upstream-health.ts';
import { allowsFallback, cancelledError, describeFailure, isRetryable } from '../chat/upstream-errors.ts';
import { EspeakEngine } from './espeak.engine.ts';
import { EspeakPool } from './espeak-pool.ts';
import { OPENAI_SPEECH_DEFAULT_TIMEOUT_MS, OpenAISpeechAdapter } from './openai-speech.adapter.ts';
import type { SpeechAudio, SpeechCallOptions, SpeechEngine, SpeechRequest } from './speech-engine.ts';

/*
 * Which speech engine serves a call, as the chat gateway (src/providers/chat/chat-gateway.ts) decides for chat: a
 * model's provider bindings in order; each gets up to `maxRetries` more attempts (default 1) on a retryable failure
 * before any audio; then the next binding. A caller's mistake (ValidationError) ends the call at once; an engine
 * that failed FAILURES_BEFORE_COOLDOWN times in a row is tried last for `cooldownMs`. Operator providers of type
 * `simulator` are the built-in eSpeak NG engine, `openai-compatible` ones an OpenAI-compatible speech server.
 */

export const SPEECH_DEFAULTS = { maxRetries: 1, cooldownMs: 30_000 } as const;
const FAILURES_BEFORE_COOLDOWN = 3;

export interface SpeechEngineEntry {
  readonly engine: SpeechEngine;
  readonly maxRetries: number;
  readonly cooldownMs: number;
}

export interface SpeechGatewayDeps {
  readonly providers: readonly ProviderConfig[];
  readonly logger?: Logger | undefined;
  /** Ready-made engines (tests), added after the configured ones (replacing one with the same id). */
  readonly extra?: readonly SpeechEngineEntry[];
  /** eSpeak NG threads shared by every built-in engine (default: up to 2). */
  readonly espeakThreads?: number | undefined;
  /** Built-in speech calls in flight at most, past which a call is refused with 503 (default: 4 per thread). */
  readonly espeakMaxCalls?: number | undefined;
}

export interface SpeechGatewayResult {
  readonly providerId: string;
  readonly upstreamModel: string;
  readonly audio: SpeechAudio;
}

export class SpeechGateway {
  private readonly entries = new Map<string, SpeechEngineEntry>();
  private readonly health = new UpstreamHealth({
    failuresBeforeCooldown: FAILURES_BEFORE_COOLDOWN,
    restartCountAfterCooldown: true,
  });
  private pool: EspeakPool | undefined;

  constructor(private readonly deps: SpeechGatewayDeps) {
    for (const config of deps.providers) {
      const engine = this.engineFromConfig(config);
      if (engine) {
        this.entries.set(config.id, {
          engine,
          maxRetries: config.maxRetries ?? SPEECH_DEFAULTS.maxRetries,
          cooldownMs: config.cooldownMs ?? SPEECH_DEFAULTS.cooldownMs,
        });
      }
    }
    for (const entry of deps.extra ?? []) this.add(entry);
  }

  /** Adds (or replaces) an engine under its id. */
  add(entry: SpeechEngineEntry): void {
    this.entries.set(entry.engine.id, entry);
  }

  /** The engine that serves a model first (its primary binding that has an engine), if any. */
  primary(bindings: readonly ProviderBinding[]): SpeechEngine | undefined {
    for (const binding of bindings) {
      const entry = this.entries.get(binding.providerId);
      if (entry) return entry.engine;
    }
    return undefined;
  }

  /** Resolves once an engine's first audio can be read; later failures come from the chunks. */
  async synthesize(
    bindings: readonly ProviderBinding[],
    request: SpeechRequest,
    options: SpeechCallOptions,
  ): Promise<SpeechGatewayResult> {
    const signal = options.signal;
    if (signal?.aborted) throw cancelledError();
    const known = bindings.flatMap((binding) => {
      const entry = this.entries.get(binding.providerId);
      return entry ? [{ binding, entry }] : [];
    });
    if (known.length === 0)
      throw new UpstreamError('No speech engine is available for this model', 'SERVICE_UNAVAILABLE');
    const ordered = this.health.healthyFirst(known, ({ binding }) => binding.providerId);
    let lastError: unknown;
    for (const { binding, entry } of ordered) {
      // A cloned voice is only ever sent to an engine that can clone.
      if (typeof request.voice !== 'string' && !entry.engine.canClone) continue;
      for (let attempt = 0; ; attempt += 1) {
        try {
          const audio = await entry.engine.synthesize(binding.upstreamModel, request, options);
          this.health.succeeded(binding.providerId);
          return { providerId: binding.providerId, upstreamModel: binding.upstreamModel, audio };
        } catch (error) {
          if (signal?.aborted) throw cancelledError();
          if (!allowsFallback(error)) throw error;
          lastError = error;
          if (isRetryable(error) && attempt < entry.maxRetries) continue;
          break;
        }
      }
      if (this.health.failed(binding.providerId, entry.cooldownMs))
        this.deps.logger?.warn({ provider: binding.providerId }, 'speech engine cooling down after repeated failures');
      this.deps.logger?.warn(
        { provider: binding.providerId, failure: describeFailure(lastError) },
        'speech engine failed',
      );
    }
    throw lastError ?? new UpstreamError('No speech engine of this model can use cloned voices', 'SERVICE_UNAVAILABLE');
  }

  async close(): Promise<void> {
    await Promise.all([...this.entries.values()].map((entry) => entry.engine.close?.().catch(() => undefined)));
    await this.pool?.close();
  }

  private engineFromConfig(config: ProviderConfig): SpeechEngine | undefined {
    if (config.type === 'simulator') {
      this.pool ??= new EspeakPool({ size: this.deps.espeakThreads, maxCalls: this.deps.espeakMaxCalls });
      return new EspeakEngine(config.id, { pool: this.pool });
    }
    if (config.type === 'openai-compatible' && config.baseUrl) {
      return new OpenAISpeechAdapter(config.id, {
        baseUrl: config.baseUrl,
        apiKey: config.apiKey,
        timeoutMs: config.timeoutMs ?? OPENAI_SPEECH_DEFAULT_TIMEOUT_MS,
        headers: config.headers,
      });
    }
    return undefined;
  }
}
