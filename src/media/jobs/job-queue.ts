import { fromPglite, PgBoss, type Job } from 'pg-boss';
import { sharedConnectionOf, type Database } from '../../db/database.ts';
import type { Logger } from '../../logger.ts';
import type { JobKind } from '../../providers/jobs/job-engine.ts';

/*
 * The work queue under the jobs table: pg-boss, in its own schema of the database Lagoon already uses (PostgreSQL,
 * or the embedded PGlite through pg-boss's PGlite adapter). One queue per kind. pg-boss only drives the work
 * (delivery, retries, a dead worker's job handed out again); what a job is and where it stands is the jobs table.
 */

export const JOB_KINDS: readonly JobKind[] = ['audio', 'video'];
const queueName = (kind: JobKind) => `lagoon-${kind}-jobs`;

export interface QueueOptions {
  /** Jobs run at once per kind by this process's workers. */
  readonly concurrency: number;
  /** Whether this process runs workers (false: it only queues, separate `npm run worker` processes run them). */
  readonly workers: boolean;
  /** Further attempts after a failed one (an engine fault, a dead worker). */
  readonly retryLimit: number;
  /** How long one attempt may run before pg-boss hands the job out again. */
  readonly expireSeconds: number;
  /** How often an idle worker looks for work (LISTEN/NOTIFY wakes it sooner where the backend has it). */
  readonly pollingSeconds: number;
}

export interface Attempt {
  /** 0 on the first attempt, then one more each time the job is handed out again. */
  readonly retryCount: number;
  readonly lastAttempt: boolean;
  readonly signal: AbortSignal;
}

export type JobHandler = (jobId: string, attempt: Attempt) => Promise<void>;

interface Message {
  readonly jobId: string;
}

export class JobQueue {
  private starting: Promise<PgBoss> | undefined;

  constructor(
    private readonly deps: {
      readonly db: Database;
      readonly logger: Logger;
      readonly options: QueueOptions;
      readonly handler: JobHandler;
    },
  ) {}

  /** Installs or migrates pg-boss's schema, creates the queues and, when this process runs workers, starts them. */
  start(): Promise<PgBoss> {
    this.starting ??= this.open().catch((error: unknown) => {
      this.starting = undefined; // the next send tries again
      throw error;
    });
    return this.starting;
  }

  async send(kind: JobKind, jobId: string): Promise<void> {
    const boss = await this.start();
    const message: Message = { jobId };
    await boss.send(queueName(kind), message);
  }

  async stop(): Promise<void> {
    const starting = this.starting;
    if (!starting) return;
    const boss = await starting.catch(() => undefined);
    this.starting = undefined;
    // Running jobs get a short grace; one cut off is handed out again once its attempt expires.
    await boss?.stop({ graceful: true, timeout: 5_000, close: true });
  }

  private async open(): Promise<PgBoss> {
    const { db, logger } = this.deps;
    const connection = sharedConnectionOf(db);
    if (!connection) throw new Error('The job queue needs a database opened by openDatabase');
    const boss =
      connection.kind === 'postgres'
        ? new PgBoss({ connectionString: connection.url, max: 4, schedule: false })
        : new PgBoss({ db: serialized(db, fromPglite(connection.pglite)), backend: 'pglite', schedule: false });
    boss.on('error', (error: unknown) => logger.error({ err: error }, 'job queue error'));
    try {
      await this.prepare(boss);
    } catch (error) {
      await boss.stop({ graceful: false, close: true }).catch(() => undefined);
      throw error;
    }
    return boss;
  }

  private async prepare(boss: PgBoss): Promise<void> {
    const { options } = this.deps;
    await boss.start();
    for (const kind of JOB_KINDS) {
      await boss.createQueue(queueName(kind), {
        retryLimit: options.retryLimit,
        retryDelay: 1,
        retryBackoff: true,
        expireInSeconds: options.expireSeconds,
      });
      if (options.workers)
        await boss.work<Message>(
          queueName(kind),
          {
            localConcurrency: options.concurrency,
            pollingIntervalSeconds: options.pollingSeconds,
          },
          async ([job]: Job<Message>[]) => {
            if (!job) return;
            await this.deps.handler(job.data.jobId, {
              retryCount: job.retryCount,
              lastAttempt: job.retryCount >= options.retryLimit,
              signal: job.signal,
            });
          },
        );
    }
  }
}

/**
 * PGlite is one connection: Kysely queues its users on it (a transaction holds it throughout), so pg-boss's
 * statements take their turn in that same line instead of landing inside someone else's transaction.
 */
type Adapter = ReturnType<typeof fromPglite>;

function serialized(db: Database, inner: Adapter): Adapter {
  return {
    ...inner,
    executeSql: (text: string, values?: unknown[]) => db.connection().execute(() => inner.executeSql(text, values)),
  };
}
