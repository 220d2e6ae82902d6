import type { RateLimiter } from '../../rate-limits/rate-limiter.ts';
import { BUILT_IN_PROVIDERS } from '../../operator-config/default-config.ts';
import type { BillingService } from '../../billing/billing.service.ts';
import type { CatalogService } from '../../catalog/catalog.service.ts';
import type { Database } from '../../db/database.ts';
import type { Logger } from '../../logger.ts';
import type { ProviderConfig } from '../../operator-config/schema.ts';
import { SpeechGateway, type SpeechEngineEntry } from '../../providers/speech/speech-gateway.ts';
import type { UpstreamMetrics } from '../../providers/upstream-pool.ts';
import { SpeechService } from './speech.service.ts';

export type { SpeechService } from './speech.service.ts';

/** Wires speech: the gateway over the operator's providers (simulator → eSpeak NG, openai-compatible → adapter). */
export function createSpeechService(deps: {
  db: Database;
  billing: BillingService;
  catalog: CatalogService;
  logger: Logger;
  /** The operator config's providers; none (tests wiring services directly): the built-in simulator. */
  providers: readonly ProviderConfig[] | undefined;
  rateLimiter?: RateLimiter | undefined;
  /** Ready-made engines (tests). */
  extra?: readonly SpeechEngineEntry[];
  /** Built-in speech calls in flight at most (LAGOON_SPEECH_MAX_CALLS; 0 or none: 4 per eSpeak thread). */
  maxCalls?: number | undefined;
  metrics?: UpstreamMetrics | undefined;
}): SpeechService {
  const gateway = new SpeechGateway({
    providers: deps.providers ?? BUILT_IN_PROVIDERS,
    logger: deps.logger,
    metrics: deps.metrics,
    extra: deps.extra,
    espeakMaxCalls: deps.maxCalls || undefined,
  });
  return new SpeechService({
    db: deps.db,
    billing: deps.billing,
    catalog: deps.catalog,
    gateway,
    logger: deps.logger,
    rateLimiter: deps.rateLimiter,
  });
}
