import { UsageEventPublisher } from './billing/usage-events.ts';
import { CatalogService } from './catalog/catalog.service.ts';
import { ConfigError, loadConfig } from './config.ts';
import { openDatabase } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { createEventBus } from './events/event-bus.ts';
import { Lifecycle } from './lifecycle.ts';
import { createLogger } from './logger.ts';
import { createJobServices, type JobServices } from './media/jobs/job.wiring.ts';
import { createMediaKit } from './media/media.wiring.ts';
import { startTracing } from './observability/tracing.ts';
import { loadOperatorConfig } from './operator-config/load.ts';
import { createBilling } from './services.ts';
import { createWebhookEvents, createWebhooks, type Webhooks } from './webhooks/webhook.wiring.ts';
import type { BillingService } from './billing/billing.service.ts';
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import type { EventBus } from './events/event-bus.ts';
import type { Logger } from './logger.ts';
import type { OperatorConfig } from './operator-config/schema.ts';

/*
 * `npm run worker`: a process that only runs queued jobs (src/media/jobs), against the PostgreSQL of DATABASE_URL,
 * so an operator adds workers on other machines. It serves no HTTP; the API servers queue, any worker runs.
 */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    console.error(error instanceof ConfigError ? error.message : error);
    process.exit(1);
  }
  if (!config.database.url) {
    console.error('lagoon worker: set DATABASE_URL (PostgreSQL); on the embedded database the server runs the jobs');
    process.exit(1);
  }
  const logger = createLogger(config.logLevel);
  // Before the database opens: its statements get spans only when tracing is on by then.
  const tracing = await startTracing(config.tracing);
  const operatorConfig = await loadOperatorConfig(config.operatorConfigPath);
  const database = await openDatabase({ url: config.database.url, poolSize: config.jobs.concurrency * 2 + 2 });
  await migrateToLatest(database.db);
  const lifecycle = new Lifecycle(logger);
  const events = createEventBus({ redisUrl: config.redisUrl, logger, timeoutMs: config.redisTimeoutMs });
  lifecycle.add('events', { stop: () => events.close() });
  // Holds taken here are per call in the database (no balance leases): a worker only settles and releases.
  // A job settled or ended here raises its webhook events here; deliveries run here too, on the job queue's pg-boss.
  const webhooks = workerWebhooks({ db: database.db, logger, config, operatorConfig, events, lifecycle }, () => ({
    billing,
    boss: jobs.boss,
  }));
  const billing = createBilling({
    db: database.db,
    logger,
    options: { reservationTimeoutMs: config.billing.reservationTimeoutMs },
    publisher: webhooks.events.spendWatch,
  });
  lifecycle.add('billing', { stop: () => billing.close() });
  // The same store as the API servers (a directory of this machine, or the bucket they all share).
  const { store: media, links, sweeper } = createMediaKit({ db: database.db, logger, options: config.media });
  lifecycle.add('media store', { stop: () => media.close() });
  lifecycle.add('media sweep', sweeper);
  const jobs = createJobServices(
    {
      db: database.db,
      billing,
      catalog: new CatalogService({ db: database.db }),
      media,
      links,
      retentionSweepMs: config.media.sweepIntervalMs,
      logger,
      // Every state and progress change goes out on the bus (Redis): an API server's jobUpdated subscribers hear it.
      events,
      providers: operatorConfig.providers,
      options: { ...config.jobs, workers: true },
      webhooks,
    },
    lifecycle,
  );
  await jobs.workers.start();
  await lifecycle.start();
  logger.info({ concurrency: config.jobs.concurrency }, 'lagoon worker running queued jobs');

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'worker stopping');
    void lifecycle
      .stop()
      .then(() => database.close())
      .then(() => tracing?.shutdown())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'worker stop failed');
          process.exit(1);
        },
      );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

void main();

/** The webhooks of a worker process; `parts` are built after them (billing publishes through them, jobs end there). */
function workerWebhooks(
  deps: {
    db: Database;
    logger: Logger;
    config: Config;
    operatorConfig: OperatorConfig;
    events: EventBus;
    lifecycle: Lifecycle;
  },
  parts: () => { billing: BillingService; boss: JobServices['boss'] },
): Webhooks {
  const { db, logger, config } = deps;
  const inner = new UsageEventPublisher({ events: deps.events, logger });
  const events = createWebhookEvents({ db, logger, inner, balances: (id) => parts().billing.balancesOf(id) });
  const allowNetworks = deps.operatorConfig.chat?.webScraping?.allowNetworks ?? [];
  const boss = () => parts().boss();
  const settings = { options: config.webhooks, allowNetworks, boss, workers: true };
  return createWebhooks({ db, logger, ...settings, events }, deps.lifecycle);
}
