import type { BillingService } from '../../billing/billing.service.ts';
import { BUILT_IN_PROVIDERS } from '../../operator-config/default-config.ts';
import type { CatalogService } from '../../catalog/catalog.service.ts';
import type { Logger } from '../../logger.ts';
import { DEFAULT_WEB_SCRAPING } from '../../operator-config/chat-config.ts';
import type { OperatorConfig } from '../../operator-config/schema.ts';
import { ImageGateway } from '../../providers/image/image-gateway.ts';
import type { RateLimiter } from '../../rate-limits/rate-limiter.ts';
import { ImageEditService, type ImageEditGateway } from './image-edit.service.ts';
import { ImageInputLoader } from './image-input.ts';
import { createPixelWork, imageThreads, localImageProviders } from './pixel-work.ts';
import type { Slots } from './slots.ts';

/**
 * Builds the edit/upscale service. Image URLs are fetched under the web scraper's address policy: the operator's
 * `chat.webScraping.allowNetworks` (default: public addresses only) and its per-page timeout.
 */
export function createImageEditService(deps: {
  billing: BillingService;
  catalog: CatalogService;
  logger: Logger;
  operatorConfig?: Partial<Pick<OperatorConfig, 'providers' | 'chat'>> | undefined;
  /** The shared image gateway, when the caller has one; else one over the operator's providers. */
  gateway?: ImageEditGateway | undefined;
  /** The process's queue for pixel work, shared with generation (none: one of its own, pixel-work.ts). */
  pixelWork?: Slots | undefined;
  rateLimiter?: RateLimiter | undefined;
  /** The most pixels an input may have in all its frames (image-input.ts; default MAX_INPUT_TOTAL_PIXELS). */
  maxInputTotalPixels?: number | undefined;
}): ImageEditService {
  const scraping = deps.operatorConfig?.chat?.webScraping ?? DEFAULT_WEB_SCRAPING;
  const inputs = new ImageInputLoader({
    allowNetworks: scraping.allowNetworks,
    timeoutMs: scraping.timeoutMs,
    maxTotalPixels: deps.maxInputTotalPixels,
  });
  // Without an operator config (tests wiring services directly) the built-in simulator still serves.
  const own = deps.gateway
    ? undefined
    : new ImageGateway({
        providers: deps.operatorConfig?.providers ?? BUILT_IN_PROVIDERS,
        logger: deps.logger,
      });
  return new ImageEditService({
    billing: deps.billing,
    catalog: deps.catalog,
    gateway: deps.gateway ?? own!,
    inputs,
    logger: deps.logger,
    closeGateway: own && (() => own.close()),
    pixelWork: deps.pixelWork ?? createPixelWork(imageThreads()),
    localProviders: localImageProviders(deps.operatorConfig?.providers),
    rateLimiter: deps.rateLimiter,
  });
}
