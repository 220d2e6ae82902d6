import type { BillingService } from '../billing/billing.service.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { RateLimiter } from '../rate-limits/rate-limiter.ts';
import { TextParserService } from './text-parser.service.ts';

/** The text parser with the operator's pool settings (its defaults when none are given, as in tests). */
export function createTextParser(deps: {
  billing: BillingService;
  logger: Logger;
  rateLimiter: RateLimiter | undefined;
  settings: Config['textParser'] | undefined;
}): TextParserService {
  const { settings, ...rest } = deps;
  return new TextParserService({
    ...rest,
    ...(settings && {
      options: {
        perAccount: settings.perAccount,
        timeoutMs: settings.timeoutMs,
        queueTimeoutMs: settings.queueTimeoutMs,
        ...(settings.workers > 0 && { size: settings.workers }),
      },
    }),
  });
}
