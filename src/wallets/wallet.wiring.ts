import type { BillingService } from '../billing/billing.service.ts';
import type { X402Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { EventBus } from '../events/event-bus.ts';
import { periodic, type Lifecycle } from '../lifecycle.ts';
import type { Logger } from '../logger.ts';
import type { WebhookEvents } from '../webhooks/webhook.wiring.ts';
import type { SignInSite } from './sign-in-site.ts';
import { sweepNonces } from './siwx-nonces.ts';
import type { CreditedTopUp } from './top-up.repository.ts';
import { TopUpService, type TopUpServiceDeps } from './top-up.service.ts';
import { WalletService } from './wallet.service.ts';

export interface WalletWiring {
  readonly db: Database;
  readonly logger: Logger;
  readonly billing: BillingService;
  readonly events: EventBus;
  readonly lifecycle: Lifecycle;
  readonly x402: X402Config;
  readonly site: SignInSite;
  readonly webhookEvents: WebhookEvents;
  readonly metrics: TopUpServiceDeps['metrics'];
  /** How often the sign-in nonces past their time are removed. */
  readonly sweepIntervalMs: number;
}

/** Wallet callers and their top-ups, with the sweeps they need (sign-in nonces, top-ups not decided yet). */
export function createWalletServices(wiring: WalletWiring): { wallets: WalletService; topUps: TopUpService } {
  const { db, logger, billing, events, lifecycle, x402, site, webhookEvents, metrics } = wiring;
  const wallets = new WalletService({ db, billing, events, x402, site });
  lifecycle.add(
    'sign-in nonce sweep',
    periodic(() => sweepNonces(db), wiring.sweepIntervalMs, logger, 'sign-in nonce sweep'),
  );
  // Top-ups tell walletBalance subscribers, like every other change of a wallet's credit.
  const onCredited = (accountId: string, credit: CreditedTopUp) => {
    wallets.balanceChanged(accountId);
    webhookEvents.topUpCredited(accountId, credit);
  };
  const topUps = new TopUpService({ db, logger, x402, onCredited, metrics });
  // Top-ups not credited yet (a crash, a lost answer, someone else's transfer) are checked against the chain until it
  // has decided them: credited once, or closed (src/wallets/top-up-sweep.ts).
  lifecycle.add('x402 top-up recovery', {
    start: () =>
      void topUps.recover().catch((error: unknown) => logger.error({ err: error }, 'x402 top-up recovery failed')),
  });
  lifecycle.add(
    'x402 top-up re-check',
    periodic(() => topUps.recover(), 60_000, logger, 'x402 top-up recovery'),
  );
  return { wallets, topUps };
}
