import type PgBoss from 'pg-boss';
import { AddressPolicy } from '../augment/scrape/address-policy.ts';
import { formatNano } from '../billing/money.ts';
import type { UsagePublisher } from '../billing/usage.types.ts';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Lifecycle } from '../lifecycle.ts';
import type { Logger } from '../logger.ts';
import type { JobWebhooks } from '../media/jobs/job-webhooks.ts';
import { jobById } from '../media/jobs/jobs.repository.ts';
import type { CreditedTopUp } from '../wallets/top-up.repository.ts';
import { SpendWatch } from './spend-watch.ts';
import { WebhookDeliverer } from './webhook-delivery.ts';
import { WebhookEmitter, type WebhookEvent } from './webhook-emitter.ts';
import { WebhookQueue } from './webhook-queue.ts';
import { WebhookService } from './webhook.service.ts';

export type { WebhookService } from './webhook.service.ts';

/** The env defaults of src/config.ts, for a wiring without a config (tests building services directly). */
export const WEBHOOK_DEFAULTS: Config['webhooks'] = {
  timeoutMs: 10_000,
  retryWindowSeconds: 86_400,
  firstRetrySeconds: 30,
  maxEndpoints: 10,
};

export interface Webhooks extends JobWebhooks {
  readonly service: WebhookService;
  readonly emitter: WebhookEmitter;
  /** The events raised by billing and top-ups (createWebhookEvents), now sent through this wiring's emitter. */
  readonly events: WebhookEvents;
}

/**
 * The events raised before the webhooks are wired (the billing core is built first and tells of settlements through
 * this): forwarded once `connect` is called, which the wiring does before anything runs.
 */
export class WebhookRelay {
  private target: WebhookEmitter | undefined;

  connect(emitter: WebhookEmitter): void {
    this.target = emitter;
  }

  emitLater(event: WebhookEvent): void {
    this.target?.emitLater(event);
  }
}

export interface WebhookEvents {
  /** The billing core's publisher: settlements go on to `inner` and are checked for spend and balance events. */
  readonly spendWatch: SpendWatch;
  readonly relay: WebhookRelay;
  /** A wallet top-up was credited: wallet.top_up.credited, and balance.low may re-arm. */
  topUpCredited(accountId: string, credit: CreditedTopUp): void;
}

/** The event sources built with the billing core, before the webhooks themselves (createWebhooks connects them). */
export function createWebhookEvents(deps: {
  readonly db: Database;
  readonly logger: Logger;
  readonly inner: UsagePublisher;
  readonly balances: (accountId: string) => Promise<readonly { currency: string; amount: bigint }[]>;
}): WebhookEvents {
  const relay = new WebhookRelay();
  const spendWatch = new SpendWatch({
    db: deps.db,
    logger: deps.logger,
    emitter: relay,
    usdBalanceOf: async (accountId) =>
      (await deps.balances(accountId)).find((entry) => entry.currency === 'USD')?.amount ?? 0n,
    inner: deps.inner,
  });
  return {
    spendWatch,
    relay,
    topUpCredited: (accountId, credit) => {
      spendWatch.balanceChanged(accountId);
      relay.emitLater(topUpEvent(accountId, credit));
    },
  };
}

/**
 * Wires webhooks over the job queue's pg-boss (`boss`: JobQueue.ready). Deliveries run where the job workers run
 * (`workers`): the server by default, `npm run worker` processes at scale.
 */
export function createWebhooks(
  deps: {
    readonly db: Database;
    readonly logger: Logger;
    readonly options: Config['webhooks'] | undefined;
    /** The operator's `chat.webScraping.allowNetworks`: the non-public networks webhooks may reach too. */
    readonly allowNetworks: readonly string[];
    readonly boss: () => Promise<PgBoss>;
    readonly workers: boolean;
    readonly events: WebhookEvents;
  },
  lifecycle?: Lifecycle,
): Webhooks {
  const { db, logger } = deps;
  const options = deps.options ?? WEBHOOK_DEFAULTS;
  const policy = new AddressPolicy(deps.allowNetworks);
  const deliverer = new WebhookDeliverer({
    db,
    logger,
    policy,
    timeoutMs: options.timeoutMs,
    retryWindowSeconds: options.retryWindowSeconds,
  });
  const queue = new WebhookQueue({
    db,
    logger,
    boss: deps.boss,
    deliverer,
    options: { ...options, workers: deps.workers },
  });
  const emitter = new WebhookEmitter({ db, logger, queue });
  deps.events.relay.connect(emitter);
  const service = new WebhookService({ db, policy, emitter, maxEndpoints: options.maxEndpoints });
  lifecycle?.add('webhook deliveries', {
    // In the background, like the job queue: pg-boss may still be installing its schema.
    startInBackground: () => queue.start(),
    stop: async () => {
      // Its checks read the database and emit through the queue: done before either closes.
      await deps.events.spendWatch.close();
      await queue.stop();
      await deliverer.close();
    },
  });
  const jobFinished = (jobId: string) => {
    void jobEvent(db, jobId)
      .then((event) => event && emitter.emit(event))
      .catch((error: unknown) => logger.error({ err: error, jobId }, 'a job webhook event was lost'));
  };
  const checkJobWebhookUrl = (accountId: string, url: string) => service.checkJobWebhookUrl(accountId, url);
  return { service, emitter, events: deps.events, jobFinished, checkJobWebhookUrl };
}

/** job.completed / job.failed of a job as its row stands; its id names the event, so telling it twice is harmless. */
async function jobEvent(db: Database, jobId: string): Promise<WebhookEvent | undefined> {
  const job = await jobById(db, jobId);
  if (!job || (job.status !== 'COMPLETED' && job.status !== 'FAILED')) return undefined;
  const type = job.status === 'COMPLETED' ? 'job.completed' : 'job.failed';
  return {
    accountId: job.account_id,
    type,
    eventId: `evt_job_${job.id.replaceAll('-', '')}`,
    extraUrl: job.webhook_url,
    data: {
      queueId: job.id,
      kind: job.kind,
      model: job.model_id,
      status: job.status,
      ...(job.error !== null && { error: job.error }),
      createdAt: job.created_at.toISOString(),
      finishedAt: job.finished_at?.toISOString() ?? null,
    },
  };
}

/** wallet.top_up.credited: the payment's id names the event (a credit is made once; telling it twice is harmless). */
function topUpEvent(accountId: string, credit: CreditedTopUp): WebhookEvent {
  return {
    accountId,
    type: 'wallet.top_up.credited',
    eventId: `evt_topup_${credit.paymentId.replaceAll('-', '')}`,
    data: {
      paymentId: credit.paymentId,
      currency: 'USD',
      amount: formatNano(credit.amount),
      balance: credit.balanceAfter === null ? null : formatNano(credit.balanceAfter),
      payer: credit.payer,
      transaction: credit.transaction,
    },
  };
}
