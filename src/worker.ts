import { UsageEventPublisher } from './billing/usage-events.ts';
import { CatalogService } from './catalog/catalog.service.ts';
import { ConfigError, loadConfig } from './config.ts';
import { openDatabase } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { createEventBus } from './events/event-bus.ts';
import { Lifecycle } from './lifecycle.ts';
import { createLogger } from './logger.ts';
import { createJobServices } from './media/jobs/job.wiring.ts';
import { createMediaKit } from './media/media.wiring.ts';
import { loadOperatorConfig } from './operator-config/load.ts';
import { createBilling } from './services.ts';

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
  const operatorConfig = await loadOperatorConfig(config.operatorConfigPath);
  const database = await openDatabase({ url: config.database.url, poolSize: config.jobs.concurrency * 2 + 2 });
  await migrateToLatest(database.db);
  const lifecycle = new Lifecycle(logger);
  const events = createEventBus({ redisUrl: config.redisUrl, logger, timeoutMs: config.redisTimeoutMs });
  lifecycle.add('events', { stop: () => events.close() });
  // Holds taken here are per call in the database (no balance leases): a worker only settles and releases.
  const billing = createBilling({
    db: database.db,
    logger,
    options: { reservationTimeoutMs: config.billing.reservationTimeoutMs },
    publisher: new UsageEventPublisher({ events, logger }),
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
