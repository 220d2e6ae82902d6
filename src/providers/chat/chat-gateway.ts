import { outcomeOf, pauseBeforeRetry, type UpstreamOutcome } from '../upstream-retry.ts';
import { UpstreamHealth } from '../upstream-health.ts';
import { UpstreamError, ValidationError } from '../../errors.ts';
import type { ProviderBinding } from '../../catalog/model.ts';
import type { Logger } from '../../logger.ts';
import type { ProviderConfig } from '../../operator-config/schema.ts';
import type {
  ChatCallOptions,
  ChatProvider,
  UpstreamChatChunk,
  UpstreamChatCompletion,
  UpstreamChatRequest,
  UpstreamChatStream,
} from './chat-provider.ts';
import {
  OPENAI_COMPATIBLE_DEFAULT_TIMEOUT_MS,
  OpenAICompatibleAdapter,
  OpenAICompatibleOptions,
} from './openai-compatible.adapter.ts';
import { SimulatorAdapter, SimulatorOptions } from './simulator.adapter.ts';
import { allowsFallback, cancelledError, describeFailure, isRetryable } from './upstream-errors.ts';

/*
 * Which chat upstream serves a call. A model's provider bindings are tried in order; each provider gets up to
 * `maxRetries` more attempts (default 1) on a connection error, 5xx, 429 or timeout, only before any output;
 * then the next binding. A 4xx that is the caller's fault (ValidationError) ends the call at once. A provider
 * whose calls failed FAILURES_BEFORE_COOLDOWN times in a row is skipped for `cooldownMs` (default 30 s) unless
 * every provider of the model is cooling down. The caller's abort stops everything. Health is per process.
 */

/** The provider id of the `OPENAI_COMPATIBLE_BASE_URL` shortcut (models found by discovery are bound to it). */
export const ENV_CHAT_PROVIDER_ID = 'openai-compatible';
export const CHAT_DEFAULTS = { maxRetries: 1, cooldownMs: 30_000 } as const;
const FAILURES_BEFORE_COOLDOWN = 3;

/** Where upstream calls are counted (src/metrics.ts implements it). */
export interface UpstreamMetrics {
  observeUpstream(
    provider: string,
    operation: 'chat' | 'chat_stream' | 'models',
    outcome: UpstreamOutcome,
    seconds: number,
  ): void;
}
export type { UpstreamOutcome } from '../upstream-retry.ts';

/** The env shortcut, as src/config.ts reads it. */
export interface ChatEnvUpstream {
  readonly baseUrl: string | undefined;
  readonly apiKey: string | undefined;
}

export interface ChatProviderEntry {
  readonly provider: ChatProvider & { close?(): Promise<void> };
  readonly maxRetries: number;
  readonly cooldownMs: number;
}

export interface ChatGatewayDeps {
  /** The effective operator config's providers (types other than simulator and openai-compatible are ignored). */
  readonly providers: readonly ProviderConfig[];
  readonly env?: ChatEnvUpstream | undefined;
  readonly logger?: Logger | undefined;
  readonly metrics?: UpstreamMetrics | undefined;
  /** Ready-made providers (tests), added after the configured ones. */
  readonly extra?: readonly ChatProviderEntry[];
  readonly now?: () => number;
}

export interface GatewayResult {
  readonly providerId: string;
  readonly upstreamModel: string;
}

export class ChatGateway {
  private readonly entries = new Map<string, ChatProviderEntry>();
  private readonly health: UpstreamHealth;
  private readonly now: () => number;

  constructor(private readonly deps: ChatGatewayDeps) {
    this.now = deps.now ?? Date.now;
    this.health = new UpstreamHealth(
      { failuresBeforeCooldown: FAILURES_BEFORE_COOLDOWN, restartCountAfterCooldown: true },
      this.now,
    );
    for (const config of deps.providers) {
      const entry = entryFromConfig(config);
      if (entry) this.entries.set(config.id, entry);
    }
    const env = deps.env;
    if (env?.baseUrl) {
      if (this.entries.has(ENV_CHAT_PROVIDER_ID)) {
        deps.logger?.warn(
          `OPENAI_COMPATIBLE_BASE_URL is ignored: the operator config already declares a provider "${ENV_CHAT_PROVIDER_ID}"`,
        );
      } else {
        const provider = new OpenAICompatibleAdapter(ENV_CHAT_PROVIDER_ID, {
          baseUrl: env.baseUrl,
          apiKey: env.apiKey,
          timeoutMs: OPENAI_COMPATIBLE_DEFAULT_TIMEOUT_MS,
        });
        this.entries.set(ENV_CHAT_PROVIDER_ID, { provider, ...CHAT_DEFAULTS });
      }
    }
    for (const entry of deps.extra ?? []) this.entries.set(entry.provider.id, entry);
  }

  has(providerId: string): boolean {
    return this.entries.has(providerId);
  }

  async complete(
    bindings: readonly ProviderBinding[],
    body: Omit<UpstreamChatRequest, 'model'>,
    options: ChatCallOptions,
  ): Promise<GatewayResult & { completion: UpstreamChatCompletion }> {
    const { result, ...where } = await this.run(bindings, options, 'chat', (provider, model) =>
      provider.complete(withModel(body, model), options),
    );
    return { ...where, completion: result };
  }

  /** Resolves once a provider's stream started (its first chunk arrived); later failures come from the iterator. */
  async stream(
    bindings: readonly ProviderBinding[],
    body: Omit<UpstreamChatRequest, 'model'>,
    options: ChatCallOptions,
  ): Promise<GatewayResult & { stream: UpstreamChatStream }> {
    const { result, ...where } = await this.run(bindings, options, 'chat_stream', (provider, model) =>
      provider.stream(withModel(body, model), options),
    );
    return { ...where, stream: this.watch(where.providerId, result) };
  }

  /** The upstream's model ids, for discovery; throws when the provider is unknown or has no model list. */
  async listModels(providerId: string, signal?: AbortSignal): Promise<string[]> {
    const provider = this.entries.get(providerId)?.provider;
    if (!provider?.listModels) throw new UpstreamError('This provider cannot list its models', 'SERVICE_UNAVAILABLE');
    const started = performance.now();
    try {
      const models = await provider.listModels(signal ? { signal } : {});
      this.observe(providerId, 'models', 'ok', started);
      return models;
    } catch (error) {
      this.observe(providerId, 'models', outcomeOf(error, signal), started);
      throw error;
    }
  }

  /** Closes the HTTP connection pools. */
  async close(): Promise<void> {
    await Promise.all([...this.entries.values()].map((entry) => entry.provider.close?.().catch(() => undefined)));
  }

  private async run<T>(
    bindings: readonly ProviderBinding[],
    options: ChatCallOptions,
    operation: 'chat' | 'chat_stream',
    call: (provider: ChatProvider, upstreamModel: string) => Promise<T>,
  ): Promise<GatewayResult & { result: T }> {
    const signal = options.signal;
    if (signal?.aborted) throw cancelledError();
    const known = bindings.flatMap((binding) => {
      const entry = this.entries.get(binding.providerId);
      return entry ? [{ binding, entry }] : [];
    });
    if (known.length === 0)
      throw new UpstreamError('No model server is available for this model', 'SERVICE_UNAVAILABLE');
    const now = this.now();
    const ready = known.filter(({ binding }) => !this.health.cooling(binding.providerId, now));
    const ordered = ready.length > 0 ? ready : known;

    let lastError: unknown;
    for (const { binding, entry } of ordered) {
      for (let attempt = 0; ; attempt += 1) {
        const started = performance.now();
        try {
          const result = await call(entry.provider, binding.upstreamModel);
          this.observe(binding.providerId, operation, 'ok', started);
          this.health.succeeded(binding.providerId);
          return { providerId: binding.providerId, upstreamModel: binding.upstreamModel, result };
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
      this.recordFailure(binding.providerId, entry.cooldownMs);
      this.deps.logger?.warn(
        { provider: binding.providerId, failure: describeFailure(lastError) },
        'chat upstream failed',
      );
    }
    throw lastError;
  }

  private recordFailure(providerId: string, cooldownMs: number): void {
    if (this.health.failed(providerId, cooldownMs))
      this.deps.logger?.warn(
        { provider: providerId, cooldownMs },
        'chat upstream cooling down after repeated failures',
      );
  }

  /** Counts a mid-stream break as a failure of the provider (it did not deliver what it started). */
  private watch(providerId: string, inner: UpstreamChatStream): UpstreamChatStream {
    const cooldownMs = this.entries.get(providerId)?.cooldownMs ?? CHAT_DEFAULTS.cooldownMs;
    return watchedStream(inner, () => {
      this.recordFailure(providerId, cooldownMs);
      this.deps.metrics?.observeUpstream(providerId, 'chat_stream', 'broken', 0);
    });
  }

  private observe(
    providerId: string,
    operation: 'chat' | 'chat_stream' | 'models',
    outcome: UpstreamOutcome,
    started: number,
  ): void {
    this.deps.metrics?.observeUpstream(providerId, operation, outcome, (performance.now() - started) / 1000);
  }
}

/** The upstream body: the service's body with the upstream model name. */
function withModel(body: Omit<UpstreamChatRequest, 'model'>, model: string): UpstreamChatRequest {
  const messages = body.messages;
  if (!Array.isArray(messages)) throw new ValidationError('messages: expected an array');
  return { ...body, model, messages: messages as UpstreamChatRequest['messages'] };
}

/** The stream as it is, with its breaks counted. A plain iterator: an async generator costs more on every chunk. */
function watchedStream(inner: UpstreamChatStream, onBreak: () => void): UpstreamChatStream {
  return {
    cancel: () => inner.cancel(),
    [Symbol.asyncIterator](): AsyncIterator<UpstreamChatChunk> {
      const chunks = inner[Symbol.asyncIterator]();
      return {
        next: async () => {
          try {
            return await chunks.next();
          } catch (error) {
            if (error instanceof UpstreamError && allowsFallback(error)) onBreak();
            throw error;
          }
        },
        return: async () => (await chunks.return?.()) ?? { done: true, value: undefined },
      };
    },
  };
}

function entryFromConfig(config: ProviderConfig): ChatProviderEntry | undefined {
  const retries = {
    maxRetries: config.maxRetries ?? CHAT_DEFAULTS.maxRetries,
    cooldownMs: config.cooldownMs ?? CHAT_DEFAULTS.cooldownMs,
  };
  if (config.type === 'simulator') {
    return { provider: new SimulatorAdapter(config.id, parseOptions(config, SimulatorOptions)), ...retries };
  }
  if (config.type === 'openai-compatible' && config.baseUrl) {
    const provider = new OpenAICompatibleAdapter(config.id, {
      baseUrl: config.baseUrl,
      apiKey: config.apiKey,
      timeoutMs: config.timeoutMs ?? OPENAI_COMPATIBLE_DEFAULT_TIMEOUT_MS,
      headers: config.headers,
      options: parseOptions(config, OpenAICompatibleOptions),
    });
    return { provider, ...retries };
  }
  return undefined;
}

function parseOptions<T>(
  config: ProviderConfig,
  schema: {
    safeParse(
      value: unknown,
    ): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
  },
): T {
  const parsed = schema.safeParse(config.options ?? {});
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `options.${issue.path.map(String).join('.')}: ${issue.message}`);
  throw new Error(`Invalid operator config: provider "${config.id}" (${config.type}): ${problems.join('; ')}`);
}
