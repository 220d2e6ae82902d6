import type PgBoss from 'pg-boss';
import type { Database } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import { executorOf } from '../media/jobs/queue-workers.ts';
import type { WebhookDeliverer } from './webhook-delivery.ts';

/*
 * Deliveries ride on the pg-boss instance of the job queue (src/media/jobs/job-queue.ts: its schema, its connection,
 * on PostgreSQL and PGlite alike), in a queue of their own. pg-boss retries a failed attempt with exponential backoff
 * (the first retry after `firstRetrySeconds`, each later one about twice as late, with jitter) as many times as fit
 * in the retry window; the deliverer also stops at the window's end.
 */

export const WEBHOOK_QUEUE = 'lagoon-webhooks';
const WORKERS = 2;
/** A delivery queued in this process wakes its workers at once (wake()); the poll finds the others and retries. */
const POLLING_SECONDS = 5;
/** pg-boss 10 refuses an attempt time of a day or more; a delivery takes seconds. */
const EXPIRE_MARGIN_SECONDS = 30;

export interface WebhookQueueOptions {
  readonly timeoutMs: number;
  readonly retryWindowSeconds: number;
  readonly firstRetrySeconds: number;
  /** Whether this process runs delivery workers (with the job workers). */
  readonly workers: boolean;
}

/** Retries that fit in the window when each waits at least twice the one before (pg-boss's backoff). */
export function retriesFor(windowSeconds: number, firstRetrySeconds: number): number {
  if (windowSeconds <= 0) return 0;
  return Math.min(30, Math.ceil(Math.log2(windowSeconds / firstRetrySeconds + 1)));
}

interface Message {
  readonly jobId: string;
}

export class WebhookQueue {
  private prepared: Promise<PgBoss> | undefined;
  private readonly workerIds: string[] = [];

  constructor(
    private readonly deps: {
      readonly db: Database;
      readonly logger: Logger;
      /** The job queue's pg-boss, started (JobQueue.ready). */
      readonly boss: () => Promise<PgBoss>;
      readonly deliverer: WebhookDeliverer;
      readonly options: WebhookQueueOptions;
    },
  ) {}

  /** The queue created (once per process), for a send. Call before opening the transaction that sends. */
  ready(): Promise<PgBoss> {
    this.prepared ??= this.prepare().catch((error: unknown) => {
      this.prepared = undefined;
      throw error;
    });
    return this.prepared;
  }

  /** Queues the deliveries inside `trx`, the transaction that inserted them. */
  async send(boss: PgBoss, deliveryIds: readonly string[], trx: Database): Promise<void> {
    for (const id of deliveryIds)
      await boss.send(WEBHOOK_QUEUE, { jobId: id } satisfies Message, { id, db: executorOf(trx) });
  }

  /** After the sending transaction committed: this process's idle workers look at once. */
  wake(boss: PgBoss): void {
    for (const id of this.workerIds) boss.notifyWorker(id);
  }

  async start(): Promise<void> {
    if (!this.deps.options.workers) return;
    const boss = await this.ready();
    for (let i = 0; i < WORKERS; i += 1) {
      const id = await boss.work<Message>(
        WEBHOOK_QUEUE,
        { includeMetadata: true, batchSize: 1, pollingIntervalSeconds: POLLING_SECONDS },
        async ([job]) => {
          if (!job) return;
          await this.deps.deliverer.deliver(job.data.jobId, {
            retryCount: job.retryCount,
            lastAttempt: job.retryCount >= job.retryLimit,
          });
        },
      );
      this.workerIds.push(id);
    }
  }

  async stop(): Promise<void> {
    const prepared = this.prepared;
    if (!prepared || this.workerIds.length === 0) return;
    const boss = await prepared.catch(() => undefined);
    await boss?.offWork(WEBHOOK_QUEUE).catch(() => undefined);
    this.workerIds.length = 0;
  }

  private async prepare(): Promise<PgBoss> {
    const boss = await this.deps.boss();
    const { options } = this.deps;
    const settings = {
      name: WEBHOOK_QUEUE,
      retryLimit: retriesFor(options.retryWindowSeconds, options.firstRetrySeconds),
      retryDelay: options.firstRetrySeconds,
      retryBackoff: true,
      expireInSeconds: Math.ceil(options.timeoutMs / 1000) + EXPIRE_MARGIN_SECONDS,
    };
    // createQueue leaves an existing queue as it was: the update applies this process's settings to it.
    await boss.createQueue(WEBHOOK_QUEUE, settings);
    await boss.updateQueue(WEBHOOK_QUEUE, settings);
    return boss;
  }
}
