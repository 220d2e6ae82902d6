import { modelFromConfig, type CatalogModelDraft } from '../../catalog/model.ts';
import type { Logger } from '../../logger.ts';
import { DEFAULT_DISCOVERY, ModelConfigSchema, type DiscoveryConfig } from '../../operator-config/schema.ts';
import { ENV_CHAT_PROVIDER_ID } from '../../operator-config/env-providers.ts';
import { describeFailure } from '../upstream-errors.ts';

/*
 * Zero-config upstream: with OPENAI_COMPATIBLE_BASE_URL set, the upstream's GET /models is read at start and on
 * an interval, and every model it lists becomes a text model of the catalog bound to the `openai-compatible`
 * provider, priced by the config's `discovery` section. A model the config file defines (same id) wins. A failed
 * read keeps the models found before (an upstream restart must not empty the catalog) and is retried on the
 * next interval; an upstream that is down at start never stops the server from starting.
 */

/** Waits at most this long for the first read at start; a slower upstream is picked up by the next refresh. */
const START_WAIT_MS = 5_000;

export interface ModelDiscoveryDeps {
  readonly gateway: {
    has(providerId: string): boolean;
    listModels(providerId: string, signal?: AbortSignal): Promise<string[]>;
  };
  readonly catalog: { setDiscoveredModels(models: readonly CatalogModelDraft[]): Promise<void> };
  /** The operator file's `discovery` section (undefined: the schema's documented defaults). */
  readonly discovery: DiscoveryConfig | undefined;
  /** 0: read once at start only. */
  readonly refreshMs: number;
  readonly logger: Logger;
  readonly providerId?: string;
}

export class ModelDiscovery {
  private timer: NodeJS.Timeout | undefined;
  private running: AbortController | undefined;
  private readonly providerId: string;
  private readonly settings: DiscoveryConfig;

  constructor(private readonly deps: ModelDiscoveryDeps) {
    this.providerId = deps.providerId ?? ENV_CHAT_PROVIDER_ID;
    this.settings = deps.discovery ?? DEFAULT_DISCOVERY;
  }

  /** True when there is an upstream to discover from (the env shortcut is set). */
  get enabled(): boolean {
    return this.deps.gateway.has(this.providerId);
  }

  /** Reads the upstream once (waiting at most a few seconds) and then on the interval; never throws. */
  async start(): Promise<void> {
    if (!this.enabled || this.timer) return;
    if (this.deps.refreshMs > 0) {
      this.timer = setInterval(() => void this.refresh(), this.deps.refreshMs);
      this.timer.unref();
    }
    await this.refresh(AbortSignal.timeout(START_WAIT_MS));
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.running?.abort();
  }

  /** One read of the upstream's model list into the catalog; returns the catalog ids, or undefined when it failed. */
  async refresh(deadline?: AbortSignal): Promise<string[] | undefined> {
    if (this.running) return undefined; // the previous read is still going
    const controller = new AbortController();
    this.running = controller;
    try {
      const signal = deadline ? AbortSignal.any([deadline, controller.signal]) : controller.signal;
      const upstreamIds = await this.deps.gateway.listModels(this.providerId, signal);
      const models = this.toModels(upstreamIds);
      await this.deps.catalog.setDiscoveredModels(models);
      this.deps.logger.info({ provider: this.providerId, models: models.length }, 'discovered upstream models');
      return models.map((model) => model.id);
    } catch (error) {
      if (!controller.signal.aborted) {
        this.deps.logger.warn(
          { provider: this.providerId, failure: describeFailure(error) },
          'could not read the upstream model list; retrying on the next refresh',
        );
      }
      return undefined;
    } finally {
      if (this.running === controller) this.running = undefined;
    }
  }

  private toModels(upstreamIds: readonly string[]): CatalogModelDraft[] {
    const models: CatalogModelDraft[] = [];
    const seen = new Set<string>();
    for (const upstreamId of upstreamIds) {
      const id = catalogId(upstreamId);
      if (seen.has(id)) continue;
      const parsed = ModelConfigSchema.safeParse({
        id,
        type: 'text',
        name: upstreamId,
        description: 'Served by the operator’s OpenAI-compatible model server (found automatically).',
        traits: models.length === 0 ? this.settings.traits : [],
        contextLength: this.settings.contextLength,
        capabilities: this.settings.capabilities,
        pricing: this.settings.pricing,
        provider: this.providerId,
        upstreamModel: upstreamId,
      });
      if (!parsed.success) {
        this.deps.logger.warn(
          { provider: this.providerId, upstreamModel: upstreamId.slice(0, 200) },
          'skipped an upstream model whose name cannot be a model id',
        );
        continue;
      }
      seen.add(id);
      models.push(modelFromConfig(parsed.data));
    }
    return models;
  }
}

/**
 * The catalog id of an upstream model: ':' is reserved for the chat suffix (`model:key=value`), so Ollama's
 * `llama3.2:latest` becomes `llama3.2` and `qwen2.5:7b` becomes `qwen2.5-7b`; other characters a model id cannot
 * hold become '-'. The upstream still receives its own name.
 */
export function catalogId(upstreamId: string): string {
  return upstreamId
    .trim()
    .replace(/:latest$/, '')
    .replace(/[^A-Za-z0-9._/-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 128);
}
