import { CompiledQuery } from 'kysely';
import { fromPglite, PgBoss, type Job } from 'pg-boss';
import { sharedConnectionOf, type Database } from '../../db/database.ts';
import type { Logger } from '../../logger.ts';
import type { JobKind } from '../../providers/jobs/job-engine.ts';
import type { QueueEntries } from './jobs.repository.ts';

/*
 * The work queue under the jobs table: pg-boss, in its own schema of the database Lagoon already uses (PostgreSQL,
 * or the embedded PGlite through pg-boss's PGlite adapter). One queue per kind. pg-boss only drives the work
 * (delivery, retries, a dead worker's job handed out again); what a job is and where it stands is the jobs table.
 */

export const JOB_KINDS: readonly JobKind[] = ['audio', 'video'];
const NO_JOB = '00000000-0000-0000-0000-000000000000';
const queueName = (kind: JobKind) => `lagoon-${kind}-jobs`;

/**
 * pg-boss's own record of each job (its `job` table, keyed by queue name and the job's id): a job in one of these
 * states will not be handed out again (failed after its last attempt, cancelled, or completed), so a job Lagoon still
 * shows running there was given up on (job-runner.ts sweepGivenUp).
 */
export const QUEUE_ENTRIES: QueueEntries = {
  table: 'pgboss.job',
  names: { audio: queueName('audio'), video: queueName('video') },
  endedStates: ['failed', 'cancelled', 'completed'],
};

export interface QueueOptions {
  /** Jobs run at once per kind by this process's workers. */
  readonly concurrency: number;
  /** Whether this process runs workers (false: it only queues, separate `npm run worker` processes run them). */
  readonly workers: boolean;
  /** Further attempts after a failed one (an engine fault, a dead worker). */
  readonly retryLimit: number;
  /** How long one attempt may run before pg-boss hands the job out again. */
  readonly expireSeconds: number;
  /**
   * A running attempt's worker beats every half of this; pg-boss's monitor (run as often) hands out again an attempt
   * whose beat is this late, so a killed worker's job restarts within about twice this instead of `expireSeconds`.
   */
  readonly heartbeatSeconds: number;
  /** How often an idle worker looks for work (LISTEN/NOTIFY wakes it sooner where the backend has it). */
  readonly pollingSeconds: number;
  /** PostgreSQL: wake idle workers by NOTIFY on each send (default true; false for bench/jobs.ts comparisons). */
  readonly notify?: boolean;
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
  private warming: Promise<PgBoss> | undefined;

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

  /**
   * Puts the job on its queue inside `trx`, the transaction that inserts its row: both commit or neither does, so
   * no crash leaves a QUEUED row that no queue entry will ever run. The pg-boss job takes the job's id.
   * Call `ready()` before opening `trx`: on PGlite (one connection, which `trx` holds) pg-boss cannot start there.
   */
  async send(kind: JobKind, jobId: string, trx: Database): Promise<void> {
    const boss = await this.ready();
    const message: Message = { jobId };
    const db = {
      executeSql: async (text: string, values?: unknown[]) => {
        const result = await trx.executeQuery<Record<string, unknown>>(CompiledQuery.raw(text, values ?? []));
        return { rows: result.rows };
      },
    };
    await boss.send(queueName(kind), message, { id: jobId, db });
  }

  /**
   * The queue started, with pg-boss's cache of each queue's settings filled (a send reads it through pg-boss's own
   * connection, which must not happen while a caller's transaction holds PGlite's only one).
   */
  ready(): Promise<PgBoss> {
    this.warming ??= this.start()
      .then(async (boss) => {
        // getJobById reads the queue's settings into that cache; the id is one no job has.
        for (const kind of JOB_KINDS) await boss.getJobById(queueName(kind), NO_JOB);
        return boss;
      })
      .catch((error: unknown) => {
        this.warming = undefined;
        throw error;
      });
    return this.warming;
  }

  async stop(): Promise<void> {
    const starting = this.starting;
    if (!starting) return;
    const boss = await starting.catch(() => undefined);
    this.starting = undefined;
    this.warming = undefined;
    // Running jobs get a short grace; one cut off is handed out again once its attempt expires.
    await boss?.stop({ graceful: true, timeout: 5_000, close: true });
  }

  private async open(): Promise<PgBoss> {
    const { db, logger } = this.deps;
    const connection = sharedConnectionOf(db);
    if (!connection) throw new Error('The job queue needs a database opened by openDatabase');
    // The monitor that fails attempts without a heartbeat runs every heartbeat (its default is a minute).
    const beat = this.deps.options.heartbeatSeconds;
    const timers = { schedule: false, monitorIntervalSeconds: beat, superviseIntervalSeconds: beat };
    // On PostgreSQL a send NOTIFYs idle workers, which fetch at once instead of at their next poll (bench/jobs.ts).
    const boss =
      connection.kind === 'postgres'
        ? new PgBoss({
            connectionString: connection.url,
            max: 4,
            useListenNotify: this.deps.options.notify !== false,
            ...timers,
          })
        : new PgBoss({ db: serialized(db, fromPglite(connection.pglite)), backend: 'pglite', ...timers });
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
    const settings = {
      retryLimit: options.retryLimit,
      retryDelay: 1,
      retryBackoff: true,
      expireInSeconds: options.expireSeconds,
      heartbeatSeconds: options.heartbeatSeconds,
      notify: options.notify !== false,
    };
    for (const kind of JOB_KINDS) {
      // createQueue leaves an existing queue as it was: the update applies this process's settings to it.
      await boss.createQueue(queueName(kind), settings);
      await boss.updateQueue(queueName(kind), settings);
      if (options.workers)
        await boss.work<Message>(
          queueName(kind),
          {
            localConcurrency: options.concurrency,
            pollingIntervalSeconds: options.pollingSeconds,
            // While NOTIFY works, polling stays as frequent: a worker that finished a job fetches the next
            // queued one within a poll, not only when a new job's NOTIFY arrives.
            notifyPollingIntervalSeconds: options.pollingSeconds,
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
