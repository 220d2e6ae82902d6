import { keyOf, type AccountAuthContext, type AuthContext } from '../auth/auth-context.ts';
import { requireAccount } from '../auth/permissions.ts';
import type { BillingService } from '../billing/billing.service.ts';
import type { Nano } from '../billing/money.ts';
import type { CatalogService } from '../catalog/catalog.service.ts';
import type { RateLimitBreach } from './breach-log.ts';
import { RATE_LIMIT_TIER, type RateLimitType } from './limits.ts';
import { PRODUCT_LIST } from './products.ts';
import type { Admission, RateLimiter } from './rate-limiter.ts';

/** GET /api_keys/rate_limits: the calling key's standing and its limits on every model. */
export interface RateLimitStatus {
  /** The key may make paid calls: it has not expired and the account has funds not held by running calls. */
  readonly accessPermitted: boolean;
  readonly tier: { readonly id: string; readonly isCharged: boolean };
  readonly balances: { readonly usd: Nano; readonly diem: Nano };
  readonly keyExpiration: Date | null;
  /** The next 00:00 UTC (when EPOCH key limits and the DIEM allotment start again). */
  readonly nextEpochBegins: Date;
  readonly models: readonly {
    readonly modelId: string;
    readonly limits: readonly { readonly type: RateLimitType; readonly amount: number }[];
  }[];
}

const DAY_MS = 86_400_000;

/** The rate-limit reads of an account (any key type). Talks to the limiter, the catalog and billing. */
export class RateLimitService {
  constructor(
    private readonly deps: {
      limiter: RateLimiter;
      catalog: CatalogService;
      billing: BillingService;
      now?: () => Date;
    },
  ) {}

  async status(auth: AuthContext): Promise<RateLimitStatus> {
    const account = requireAccount(auth);
    const now = this.deps.now?.() ?? new Date();
    const [models, snapshots] = await Promise.all([
      this.deps.catalog.listModels('all'),
      this.deps.billing.balancesOf(account.accountId),
    ]);
    const of = (currency: string) => snapshots.find((snapshot) => snapshot.currency === currency);
    const expiresAt = keyOf(account)?.expiresAt ?? null;
    const funded = snapshots.some((snapshot) => snapshot.amount - snapshot.reserved > 0n);
    return {
      accessPermitted: funded && (expiresAt === null || expiresAt > now),
      tier: { id: RATE_LIMIT_TIER, isCharged: true },
      balances: { usd: of('USD')?.amount ?? 0n, diem: of('DIEM')?.amount ?? 0n },
      keyExpiration: expiresAt,
      nextEpochBegins: new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS + DAY_MS),
      models: [...models, ...PRODUCT_LIST].map((model) => {
        const limits = this.deps.limiter.limitsOf(account, model);
        return {
          modelId: model.id,
          limits: [
            { type: 'RPM' as const, amount: limits.rpm },
            { type: 'RPD' as const, amount: limits.rpd },
            ...(limits.tpm === null ? [] : [{ type: 'TPM' as const, amount: limits.tpm }]),
          ],
        };
      }),
    };
  }

  /** The windows this request's call was admitted in, if it made a rate-limited call (x-ratelimit-* headers). */
  windowsOf(auth: AccountAuthContext): Admission | undefined {
    return this.deps.limiter.admissionOf(auth);
  }

  /** The account's 50 newest breaches, newest first (every key of the account). */
  async log(auth: AuthContext): Promise<RateLimitBreach[]> {
    return this.deps.limiter.recentBreaches(requireAccount(auth), 50);
  }
}
