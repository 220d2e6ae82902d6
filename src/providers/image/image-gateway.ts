import { outcomeOf, pauseBeforeRetry } from '../upstream-retry.ts';
import { UpstreamHealth } from '../upstream-health.ts';
import { UpstreamError, ValidationError } from '../../errors.ts';
import type { ProviderBinding } from '../../catalog/model.ts';
import type { Logger } from '../../logger.ts';
import type { ProviderConfig } from '../../operator-config/schema.ts';
import { allowsFallback, cancelledError, describeFailure, isRetryable } from '../chat/upstream-errors.ts';
import { Automatic1111Engine } from './automatic1111.adapter.ts';
import type {
  EditImageRequest,
  EngineImage,
  GenerateImageRequest,
  ImageCallOptions,
  ImageEngine,
  UpscaleImageRequest,
} from './image-engine.ts';
import { IMAGE_UPSTREAM_DEFAULT_TIMEOUT_MS, parseEngineOptions } from './image-http.ts';
import { OpenAIImagesEngine } from './openai-images.adapter.ts';
import { SimulatorImageEngine } from './simulator.engine.ts';

/*
 * Which image engine serves a call, as src/providers/chat/chat-gateway.ts does for chat: a model's provider
 * bindings are tried in order; each provider gets up to `maxRetries` more attempts (default 1) on a connection
 * error, 5xx, 429 or timeout, then the next binding. A caller's mistake (ValidationError) ends the call at once.
 * A provider whose calls failed FAILURES_BEFORE_COOLDOWN times in a row is skipped for `cooldownMs` unless every
 * provider of the model is cooling down. The caller's abort stops everything. Health is per process.
 */

export const IMAGE_DEFAULTS = { maxRetries: 1, cooldownMs: 30_000 } as const;
const FAILURES_BEFORE_COOLDOWN = 3;

export type ImageOperation = 'image_generate' | 'image_edit' | 'image_upscale' | 'image_styles';
export type ImageUpstreamOutcome = 'ok' | 'timeout' | 'error' | 'rejected' | 'cancelled';

/**
 * Where upstream calls are counted (src/metrics.ts implements it; its labels are free strings, so the chat
 * gateway's narrower declaration of the same method fits here too).
 */
export interface ImageUpstreamMetrics {
  observeUpstream(provider: string, operation: string, outcome: string, seconds: number): void;
}

export interface ImageEngineEntry {
  readonly engine: ImageEngine;
  readonly maxRetries: number;
  readonly cooldownMs: number;
}

export interface ImageGatewayDeps {
  /** The effective operator config's providers (types without an image engine are ignored). */
  readonly providers: readonly ProviderConfig[];
  readonly logger?: Logger | undefined;
  readonly metrics?: ImageUpstreamMetrics | undefined;
  /** Ready-made engines (tests), added after the configured ones (same id: replaces it). */
  readonly extra?: readonly ImageEngineEntry[];
  readonly now?: () => number;
}

/** Which binding answered, whether its pictures are simulated, and what it answered. */
export interface ImageGatewayResult<T> {
  readonly providerId: string;
  readonly upstreamModel: string;
  readonly simulated: boolean;
  readonly result: T;
}

type Capability = 'generate' | 'edit' | 'upscale' | 'styles';
const CANNOT: Record<Capability, string> = {
  generate: 'generate images',
  edit: 'edit images',
  upscale: 'upscale images',
  styles: 'list styles',
};

export class ImageGateway {
  private readonly entries = new Map<string, ImageEngineEntry>();
  private readonly health: UpstreamHealth;
  private readonly now: () => number;

  constructor(private readonly deps: ImageGatewayDeps) {
    this.now = deps.now ?? Date.now;
    this.health = new UpstreamHealth(
      { failuresBeforeCooldown: FAILURES_BEFORE_COOLDOWN, restartCountAfterCooldown: true },
      this.now,
    );
    for (const config of deps.providers) {
      const entry = entryFromConfig(config);
      if (entry) this.entries.set(config.id, entry);
    }
    for (const entry of deps.extra ?? []) this.entries.set(entry.engine.id, entry);
  }

  has(providerId: string): boolean {
    return this.entries.has(providerId);
  }

  /** Whether some engine bound to the model can do this (edit/upscale are optional in ImageEngine). */
  can(bindings: readonly ProviderBinding[], capability: Capability): boolean {
    return bindings.some((binding) => {
      const engine = this.entries.get(binding.providerId)?.engine;
      return engine !== undefined && typeof engine[capability] === 'function';
    });
  }

  generate(
    bindings: readonly ProviderBinding[],
    request: GenerateImageRequest,
    options: ImageCallOptions,
  ): Promise<ImageGatewayResult<EngineImage[]>> {
    return this.run(bindings, options, 'generate', (engine, model) => engine.generate(model, request, options));
  }

  edit(
    bindings: readonly ProviderBinding[],
    request: EditImageRequest,
    options: ImageCallOptions,
  ): Promise<ImageGatewayResult<EngineImage>> {
    return this.run(bindings, options, 'edit', (engine, model) => {
      if (!engine.edit) throw new ValidationError('This model cannot edit images');
      return engine.edit(model, request, options);
    });
  }

  upscale(
    bindings: readonly ProviderBinding[],
    request: UpscaleImageRequest,
    options: ImageCallOptions,
  ): Promise<ImageGatewayResult<EngineImage>> {
    return this.run(bindings, options, 'upscale', (engine, model) => {
      if (!engine.upscale) throw new ValidationError('This model cannot upscale images');
      return engine.upscale(model, request, options);
    });
  }

  /** The style names of the model's first engine that lists styles (none lists any: an empty list). */
  async styles(bindings: readonly ProviderBinding[], options: ImageCallOptions): Promise<ImageGatewayResult<string[]>> {
    if (!this.can(bindings, 'styles')) {
      const first = bindings.find((binding) => this.entries.has(binding.providerId));
      if (!first) throw new UpstreamError('No image server is available for this model', 'SERVICE_UNAVAILABLE');
      const simulated = this.entries.get(first.providerId)?.engine.simulated ?? false;
      return { providerId: first.providerId, upstreamModel: first.upstreamModel, simulated, result: [] };
    }
    return this.run(bindings, options, 'styles', (engine) => (engine.styles ? engine.styles(options) : []));
  }

  /** Closes the engines' HTTP connection pools. */
  async close(): Promise<void> {
    await Promise.all([...this.entries.values()].map((entry) => entry.engine.close?.().catch(() => undefined)));
  }

  private async run<T>(
    bindings: readonly ProviderBinding[],
    options: ImageCallOptions,
    capability: Capability,
    call: (engine: ImageEngine, upstreamModel: string) => Promise<T> | T,
  ): Promise<ImageGatewayResult<T>> {
    const signal = options.signal;
    if (signal?.aborted) throw cancelledError();
    const known = bindings.flatMap((binding) => {
      const entry = this.entries.get(binding.providerId);
      return entry ? [{ binding, entry }] : [];
    });
    if (known.length === 0)
      throw new UpstreamError('No image server is available for this model', 'SERVICE_UNAVAILABLE');
    const capable = known.filter(({ entry }) => typeof entry.engine[capability] === 'function');
    if (capable.length === 0)
      throw new ValidationError(`This model cannot ${CANNOT[capability]}`, [
        { path: ['model'], message: `this model cannot ${CANNOT[capability]}` },
      ]);
    const now = this.now();
    const ready = capable.filter(({ binding }) => !this.health.cooling(binding.providerId, now));
    const ordered = ready.length > 0 ? ready : capable;
    const operation: ImageOperation = `image_${capability}`;

    let lastError: unknown;
    for (const { binding, entry } of ordered) {
      for (let attempt = 0; ; attempt += 1) {
        const started = performance.now();
        try {
          const result = await call(entry.engine, binding.upstreamModel);
          if (signal?.aborted) throw cancelledError();
          this.observe(binding.providerId, operation, 'ok', started);
          this.health.succeeded(binding.providerId);
          return {
            providerId: binding.providerId,
            upstreamModel: binding.upstreamModel,
            simulated: entry.engine.simulated,
            result,
          };
        } catch (error) {
          this.observe(binding.providerId, operation, outcomeOf(error, signal), started);
          if (signal?.aborted) throw cancelledError();
          if (!allowsFallback(error)) throw error;
          lastError = error;
          if (isRetryable(error) && attempt < entry.maxRetries && (await pauseBeforeRetry(signal))) continue;
          if (signal?.aborted) throw cancelledError();
          break;
        }
      }
      if (this.health.failed(binding.providerId, entry.cooldownMs))
        this.deps.logger?.warn(
          { provider: binding.providerId, cooldownMs: entry.cooldownMs },
          'image upstream cooling down after repeated failures',
        );
      this.deps.logger?.warn(
        { provider: binding.providerId, failure: describeFailure(lastError) },
        'image upstream failed',
      );
    }
    throw lastError;
  }

  private observe(providerId: string, operation: ImageOperation, outcome: ImageUpstreamOutcome, started: number) {
    this.deps.metrics?.observeUpstream(providerId, operation, outcome, (performance.now() - started) / 1000);
  }
}

function entryFromConfig(config: ProviderConfig): ImageEngineEntry | undefined {
  const retries = {
    maxRetries: config.maxRetries ?? IMAGE_DEFAULTS.maxRetries,
    cooldownMs: config.cooldownMs ?? IMAGE_DEFAULTS.cooldownMs,
  };
  const timeoutMs = config.timeoutMs ?? IMAGE_UPSTREAM_DEFAULT_TIMEOUT_MS;
  if (config.type === 'simulator') return { engine: new SimulatorImageEngine(config.id), ...retries };
  if (!config.baseUrl) return undefined;
  const http = { baseUrl: config.baseUrl, apiKey: config.apiKey, timeoutMs, headers: config.headers };
  if (config.type === 'openai-compatible') {
    const options = parseEngineOptions(config, OpenAIImagesEngine.options);
    return { engine: new OpenAIImagesEngine(config.id, { ...http, options }), ...retries };
  }
  if (config.type === 'automatic1111') {
    const options = parseEngineOptions(config, Automatic1111Engine.options);
    return { engine: new Automatic1111Engine(config.id, { ...http, options }), ...retries };
  }
  return undefined;
}
