import type PgBoss from 'pg-boss';
import type { BillingService } from '../../billing/billing.service.ts';
import { BUILT_IN_PROVIDERS } from '../../operator-config/default-config.ts';
import type { CatalogService } from '../../catalog/catalog.service.ts';
import type { Config } from '../../config.ts';
import type { Database } from '../../db/database.ts';
import { periodic, type Lifecycle } from '../../lifecycle.ts';
import type { EventBus } from '../../events/event-bus.ts';
import type { Logger } from '../../logger.ts';
import type { ProviderConfig } from '../../operator-config/schema.ts';
import { JobGateway } from '../../providers/jobs/job-gateway.ts';
import type { JobMetrics } from '../../observability/app-metrics.ts';
import type { UpstreamMetrics } from '../../providers/upstream-pool.ts';
import type { RateLimiter } from '../../rate-limits/rate-limiter.ts';
import type { MediaLinks } from '../media-links.ts';
import type { MediaStore } from '../media-store.ts';
import { DEFAULT_WEB_SCRAPING, type WebScrapingConfig } from '../../operator-config/chat-config.ts';
import { JobInputFetcher } from './job-input-fetcher.ts';
import { JobQueue, QUEUE_ENTRIES } from './job-queue.ts';
import { JobRunner } from './job-runner.ts';
import type { JobWebhooks } from './job-webhooks.ts';
import { JobService } from './job.service.ts';

export type { JobService } from './job.service.ts';

/** The env defaults of src/config.ts, for a wiring without a config (tests building services directly). */
const DEFAULTS: Config['jobs'] = {
  concurrency: 2,
  workers: true,
  retries: 2,
  timeoutMs: 1_800_000,
  heartbeatSeconds: 30,
  holdTtlMs: 3_600_000,
  mediaTtlMs: 86_400_000,
};

const INPUT_FETCH_MIN_TIMEOUT_MS = 60_000;
const JOB_POLLING_SECONDS = 5;
const RETENTION_SWEEP_MS = 300_000;

export interface JobServices {
  /** The API side: quote, queue, retrieve, list, watch. */
  readonly service: JobService;
  /**
   * A worker-only process's handle (src/worker.ts): starts the queue's workers and rejects if the queue cannot
   * start, where the server's lifecycle only logs it.
   */
  readonly workers: { start(): Promise<void> };
  /** The queue's pg-boss, started on first use: other queues ride on it (webhook deliveries, src/webhooks/). */
  readonly boss: () => Promise<PgBoss>;
}

/** The runner and queue behind a JobService, for tests only (see jobInternals). */
interface JobInternals {
  readonly runner: JobRunner;
  readonly queue: JobQueue;
}

const internals = new WeakMap<JobService, JobInternals>();

/**
 * For tests: the runner and queue behind a service createJobServices built (to swap an engine, run a sweep at a
 * chosen time, or fail a send). The operations expose neither.
 */
export function jobInternals(service: JobService): JobInternals {
  const found = internals.get(service);
  if (!found) throw new Error('this JobService was not built by createJobServices');
  return found;
}

/**
 * Wires queued jobs: the service (API side), the runner (worker side) and the pg-boss queue between them; the
 * queue (and with it the workers) starts and stops with the process's other background work.
 */
export function createJobServices(
  deps: {
    db: Database;
    billing: BillingService;
    catalog: CatalogService;
    media: MediaStore;
    /** Signed URLs for download-URL models (given out at queue time). */
    links: MediaLinks;
    logger: Logger;
    events?: EventBus | undefined;
    providers: readonly ProviderConfig[] | undefined;
    options?: Config['jobs'] | undefined;
    /** The operator's `chat.webScraping` (address policy, per-URL timeout) for remote inputs; default: public only. */
    webScraping?: WebScrapingConfig | undefined;
    /** How often completed jobs past their retention are deleted (LAGOON_MEDIA_SWEEP_SECONDS). */
    retentionSweepMs?: number | undefined;
    rateLimiter?: RateLimiter | undefined;
    metrics?: UpstreamMetrics | undefined;
    /** Queue wait and run time per model (the app's metrics). */
    jobMetrics?: JobMetrics | undefined;
    /** The account's webhooks: told when a job ends, and judging a job's own webhook_url. */
    webhooks?: JobWebhooks | undefined;
  },
  lifecycle?: Lifecycle,
): JobServices {
  const options = deps.options ?? DEFAULTS;
  const runner = new JobRunner({
    ...deps,
    // Without an operator config (tests wiring services directly) the built-in simulator still serves.
    engines: new JobGateway(deps.providers ?? BUILT_IN_PROVIDERS, deps),
    queueEntries: QUEUE_ENTRIES,
    options: { holdTtlMs: options.holdTtlMs, mediaTtlMs: options.mediaTtlMs },
  });
  const queue = new JobQueue({
    db: deps.db,
    logger: deps.logger,
    handler: (jobId, attempt) => runner.run(jobId, attempt),
    options: {
      concurrency: options.concurrency,
      workers: options.workers,
      retryLimit: options.retries,
      expireSeconds: Math.ceil(options.timeoutMs / 1000),
      heartbeatSeconds: options.heartbeatSeconds,
      // New entries wake the workers (NOTIFY, src/media/jobs/queue-wake.ts): the poll only finds retries that came
      // due, so it can be slow (an idle process polled 4 % of a core away at 0.5 s).
      pollingSeconds: JOB_POLLING_SECONDS,
    },
  });
  const scraping = deps.webScraping ?? DEFAULT_WEB_SCRAPING;
  // Media files are larger than web pages: at least a minute per URL whatever the scraper's page timeout.
  const inputs = new JobInputFetcher({
    allowNetworks: scraping.allowNetworks,
    timeoutMs: Math.max(scraping.timeoutMs, INPUT_FETCH_MIN_TIMEOUT_MS),
  });
  const service = new JobService({ ...deps, queue, inputs, options: { holdTtlMs: options.holdTtlMs } });
  lifecycle?.add('job queue', {
    // In the background: the app answers while pg-boss installs its schema; a send waits for it (and retries it).
    // A process without workers opens the queue only when it first sends a job.
    startInBackground: async () => {
      if (options.workers) await queue.start();
    },
    stop: async () => {
      await queue.stop();
      await inputs.close();
      await runner.engines.close();
    },
  });
  if (lifecycle)
    addSweeps(lifecycle, { runner, service, options, logger: deps.logger, retentionSweepMs: deps.retentionSweepMs });
  internals.set(service, { runner, queue });
  return {
    service,
    workers: {
      start: async () => {
        await queue.start();
      },
    },
    boss: () => queue.ready(),
  };
}

/** The jobs' periodic sweeps: stuck attempts, entries the queue gave up on, completed jobs past their retention. */
function addSweeps(
  lifecycle: Lifecycle,
  parts: {
    runner: JobRunner;
    service: JobService;
    options: Config['jobs'];
    logger: Logger;
    retentionSweepMs: number | undefined;
  },
): void {
  const { runner, service, options, logger, retentionSweepMs } = parts;
  lifecycle.add(
    'stale job sweep',
    periodic(
      () => runner.sweepStale({ timeoutMs: options.timeoutMs, retries: options.retries }),
      60_000,
      logger,
      'stale job sweep',
    ),
  );
  lifecycle.add(
    'given-up job sweep',
    // The queue's supervisor fails a dead worker's last attempt within about two heartbeats (job-queue.ts), and
    // pg-boss gives up on the job; the job follows within one more.
    periodic(() => runner.sweepGivenUp(), options.heartbeatSeconds * 1000, logger, 'given-up job sweep'),
  );
  lifecycle.add(
    'job media retention',
    periodic(
      () => service.sweepRetention(options.mediaTtlMs),
      retentionSweepMs ?? RETENTION_SWEEP_MS,
      logger,
      'job media retention sweep',
    ),
  );
}
