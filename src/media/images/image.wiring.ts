import type { RateLimiter } from '../../rate-limits/rate-limiter.ts';
import { BUILT_IN_PROVIDERS } from '../../operator-config/default-config.ts';
import type { BillingService } from '../../billing/billing.service.ts';
import type { CatalogService } from '../../catalog/catalog.service.ts';
import type { LifecyclePart } from '../../lifecycle.ts';
import type { Logger } from '../../logger.ts';
import type { ProviderConfig } from '../../operator-config/schema.ts';
import { ImageGateway, type ImageEngineEntry, type ImageUpstreamMetrics } from '../../providers/image/image-gateway.ts';
import { ImageService } from './image.service.ts';
import { createPixelWork, imageThreads, localImageProviders } from './pixel-work.ts';
import type { Slots } from './slots.ts';

/** The image capability, wired: the engines of the operator config behind one gateway, and the services on it. */
export interface ImageServices {
  /** Generation (REST and GraphQL), billed per picture. */
  readonly generation: ImageService;
  /** Image engines (simulator, openai-compatible, automatic1111) with retries, fallback and cooldown. */
  readonly gateway: ImageGateway;
  /** Closes the engines' connection pools when the process stops (src/lifecycle.ts). */
  readonly engines: LifecyclePart;
}

export function createImageServices(deps: {
  billing: BillingService;
  catalog: CatalogService;
  logger: Logger;
  /** The effective operator config's providers (none: the built-in simulator). */
  providers?: readonly ProviderConfig[] | undefined;
  metrics?: ImageUpstreamMetrics | undefined;
  rateLimiter?: RateLimiter | undefined;
  /** The process's queue for pixel work, shared with edits (none: one of its own, pixel-work.ts). */
  pixelWork?: Slots | undefined;
  /** Ready-made engines (tests). */
  extra?: readonly ImageEngineEntry[];
}): ImageServices {
  const gateway = new ImageGateway({
    providers: deps.providers ?? BUILT_IN_PROVIDERS,
    logger: deps.logger,
    metrics: deps.metrics,
    ...(deps.extra ? { extra: deps.extra } : {}),
  });
  const generation = new ImageService({
    billing: deps.billing,
    catalog: deps.catalog,
    gateway,
    logger: deps.logger,
    rateLimiter: deps.rateLimiter,
    pixelWork: deps.pixelWork ?? createPixelWork(imageThreads()),
    localProviders: localImageProviders(deps.providers),
  });
  return { generation, gateway, engines: { stop: () => gateway.close() } };
}
