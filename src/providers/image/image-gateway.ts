import { UpstreamError, ValidationError } from '../../errors.ts';
import type { ProviderBinding } from '../../catalog/model.ts';
import type { Logger } from '../../logger.ts';
import type { ProviderConfig } from '../../operator-config/schema.ts';
import type { Backoff } from '../backoff.ts';
import { factoryOf } from '../registry.ts';
import { UpstreamPool, type PoolMember, type UpstreamMetrics } from '../upstream-pool.ts';
import type {
  EditImageRequest,
  EngineImage,
  GenerateImageRequest,
  ImageCallOptions,
  ImageEngine,
  UpscaleImageRequest,
} from './image-engine.ts';

/*
 * Which image engine serves a call: the upstream pool's rules (src/providers/upstream-pool.ts), among the
 * model's engines that can do what is asked (a model none of whose engines can: 400).
 */

export type ImageOperation = 'image_generate' | 'image_edit' | 'image_upscale' | 'image_styles';

/** Where upstream calls are counted (src/metrics.ts implements it). */
export type ImageUpstreamMetrics = UpstreamMetrics;

export type ImageEngineEntry = PoolMember<ImageEngine>;

export interface ImageGatewayDeps {
  /** The effective operator config's providers (types without an image engine are ignored). */
  readonly providers: readonly ProviderConfig[];
  readonly logger?: Logger | undefined;
  readonly metrics?: UpstreamMetrics | undefined;
  /** Ready-made engines (tests), added after the configured ones (same id: replaces it). */
  readonly extra?: readonly ImageEngineEntry[];
  readonly now?: () => number;
  readonly backoff?: Backoff;
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
  private readonly pool: UpstreamPool<ImageEngine>;

  constructor(deps: ImageGatewayDeps) {
    this.pool = new UpstreamPool({
      label: 'image upstream',
      unavailable: 'No image server is available for this model',
      logger: deps.logger,
      metrics: deps.metrics,
      now: deps.now,
      backoff: deps.backoff,
    });
    this.pool.addProviders(deps.providers, (config) => factoryOf(config, 'image')?.(config));
    for (const entry of deps.extra ?? []) this.pool.add(entry);
  }

  has(providerId: string): boolean {
    return this.pool.has(providerId);
  }

  /** Whether some engine bound to the model can do this (edit/upscale are optional in ImageEngine). */
  can(bindings: readonly ProviderBinding[], capability: Capability): boolean {
    return this.pool.known(bindings).some(({ member }) => typeof member.engine[capability] === 'function');
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
      const [first] = this.pool.known(bindings);
      if (!first) throw new UpstreamError('No image server is available for this model', 'SERVICE_UNAVAILABLE');
      const { binding, member } = first;
      return {
        providerId: binding.providerId,
        upstreamModel: binding.upstreamModel,
        simulated: member.engine.simulated,
        result: [],
      };
    }
    return this.run(bindings, options, 'styles', (engine) => (engine.styles ? engine.styles(options) : []));
  }

  /** Closes the engines' HTTP connection pools. */
  close(): Promise<void> {
    return this.pool.close();
  }

  private async run<T>(
    bindings: readonly ProviderBinding[],
    options: ImageCallOptions,
    capability: Capability,
    call: (engine: ImageEngine, upstreamModel: string) => Promise<T> | T,
  ): Promise<ImageGatewayResult<T>> {
    const { providerId, upstreamModel, engine, result } = await this.pool.run(
      bindings,
      {
        operation: `image_${capability}` satisfies ImageOperation,
        signal: options.signal,
        eligible: (candidate) => typeof candidate[capability] === 'function',
        ineligible: () =>
          new ValidationError(`This model cannot ${CANNOT[capability]}`, [
            { path: ['model'], message: `this model cannot ${CANNOT[capability]}` },
          ]),
      },
      call,
    );
    return { providerId, upstreamModel, simulated: engine.simulated, result };
  }
}
