import { sql } from 'kysely';
import { createRequire } from 'node:module';
import type PgBoss from 'pg-boss';
import { sharedConnectionOf, type Database } from '../../db/database.ts';
import type { PgliteThread } from '../../db/pglite-thread.ts';
import type { Logger } from '../../logger.ts';
import { traceCarrier } from '../../observability/tracing.ts';
import type { JobKind } from '../../providers/jobs/job-engine.ts';
import type { QueueEntries } from './jobs.repository.ts';
import { listenForWakes, WAKE_CHANNEL } from './queue-wake.ts';
import { ENTRY_TABLE, executorOf, QUEUE_SCHEMA, QueueWorkers, type JobHandler, type Message } from './queue-workers.ts';

const require = createRequire(import.meta.url);

export type { Attempt, JobHandler } from './queue-workers.ts';

/*
 * The work queue under the jobs table: pg-boss 10 (the last that runs on Node 20), in its own schema of the database
 * Lagoon already uses (PostgreSQL, or the embedded PGlite through an adapter below). One queue per kind. pg-boss only
 * drives the work (delivery, retries, a dead worker's job handed out again); what a job is and where it stands is the
 * jobs table. The workers, their heartbeats and the wake-ups on send are Lagoon's (queue-workers.ts, queue-wake.ts).
 */

export const JOB_KINDS: readonly JobKind[] = ['audio', 'video'];
const queueName = (kind: JobKind) => `lagoon-${kind}-jobs`;
const QUEUE_NAMES = JOB_KINDS.map(queueName);
/** pg-boss 10 refuses an attempt time of a day or more. */
const MAX_EXPIRE_SECONDS = 86_399;
const STOP_GRACE_MS = 5_000;

/**
 * pg-boss's own record of each job (its `job` table, keyed by queue name and the job's id): a job in one of these
 * states will not be handed out again (failed after its last attempt, cancelled, or completed), so a job Lagoon still
 * shows running there was given up on (job-runner.ts sweepGivenUp).
 */
export const QUEUE_ENTRIES: QueueEntries = {
  table: ENTRY_TABLE,
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
  /** How long one attempt may run before it is aborted and the job handed out again. */
  readonly expireSeconds: number;
  /**
   * A running attempt beats every half of this; the supervisor (run as often, in every process with the queue open)
   * fails an attempt whose beat is this late, so a killed worker's job restarts within about twice this instead of
   * `expireSeconds`.
   */
  readonly heartbeatSeconds: number;
  /** How often an idle worker looks for work (a wake-up on send makes it look sooner). */
  readonly pollingSeconds: number;
  /** Wake idle workers by NOTIFY on each send (default true; false for bench/jobs.ts comparisons). */
  readonly notify?: boolean;
}

interface Opened {
  readonly boss: PgBoss;
  readonly close: () => Promise<void>;
}

export class JobQueue {
  private starting: Promise<Opened> | undefined;

  constructor(
    private readonly deps: {
      readonly db: Database;
      readonly logger: Logger;
      readonly options: QueueOptions;
      readonly handler: JobHandler;
    },
  ) {}

  /**
   * Installs or migrates pg-boss's schema, creates the queues, hands over jobs left without an entry, starts the
   * supervisor and, when this process runs workers, the workers.
   */
  async start(): Promise<PgBoss> {
    this.starting ??= this.open().catch((error: unknown) => {
      this.starting = undefined; // the next send tries again
      throw error;
    });
    return (await this.starting).boss;
  }

  /**
   * Puts the job on its queue inside `trx`, the transaction that inserts its row: both commit or neither does, so
   * no crash leaves a QUEUED row that no queue entry will ever run. The pg-boss job takes the job's id.
   * Call `ready()` before opening `trx`: on PGlite (one connection, which `trx` holds) pg-boss cannot start there.
   */
  async send(kind: JobKind, jobId: string, trx: Database): Promise<void> {
    const boss = await this.ready();
    // With tracing on, the entry carries the request's traceparent: the attempt's span continues its trace.
    const message: Message = { jobId, ...traceCarrier() };
    await boss.send(queueName(kind), message, { id: jobId, db: executorOf(trx) });
    if (this.deps.options.notify !== false)
      await sql`select pg_notify(${WAKE_CHANNEL}, ${queueName(kind)})`.execute(trx);
  }

  /** The queue started (a send needs nothing more). */
  ready(): Promise<PgBoss> {
    return this.start();
  }

  async stop(): Promise<void> {
    const starting = this.starting;
    if (!starting) return;
    this.starting = undefined;
    const opened = await starting.catch(() => undefined);
    await opened?.close();
  }

  private async open(): Promise<Opened> {
    const { db, logger, options } = this.deps;
    const connection = sharedConnectionOf(db);
    if (!connection) throw new Error('The job queue needs a database opened by openDatabase');
    const beat = options.heartbeatSeconds;
    // pg-boss's maintenance (attempts past their time failed, old entries archived) runs every heartbeat.
    const settings = { schema: QUEUE_SCHEMA, schedule: false, maintenanceIntervalSeconds: beat };
    // Loaded when the queue opens, after the listener is up, rather than with the server's modules.
    const Boss = require('pg-boss') as typeof PgBoss;
    const boss =
      connection.kind === 'postgres'
        ? new Boss({ connectionString: connection.url, max: 4, ...settings })
        : new Boss({ db: serialized(db, connection.pglite), ...settings });
    boss.on('error', (error: unknown) => logger.error({ err: error }, 'job queue error'));
    const closers: (() => Promise<void>)[] = [];
    const close = async () => {
      for (const closer of closers.reverse()) await closer().catch(() => undefined);
    };
    closers.push(() => boss.stop({ graceful: false, close: true, wait: true }));
    try {
      await boss.start();
      await this.createQueues(boss);
      await this.handOver(boss);
      const supervisor = setInterval(() => void this.supervise(boss), beat * 1000);
      supervisor.unref();
      closers.push(async () => clearInterval(supervisor));
      const workers = options.workers
        ? new QueueWorkers({
            boss,
            db,
            logger,
            handler: this.deps.handler,
            heartbeatSeconds: beat,
            pollingSeconds: options.pollingSeconds,
          })
        : undefined;
      if (workers) {
        if (options.notify !== false) {
          const wakes = { onWake: (queue: string) => workers.wake(queue), onListening: () => workers.wakeAll() };
          closers.push(await listenForWakes(connection, wakes, logger));
        }
        for (const name of QUEUE_NAMES) workers.start(name, options.concurrency);
        closers.push(() => workers.stop(STOP_GRACE_MS));
      }
      return { boss, close };
    } catch (error) {
      await close();
      throw error;
    }
  }

  private async createQueues(boss: PgBoss): Promise<void> {
    const { options } = this.deps;
    const settings = {
      retryLimit: options.retryLimit,
      retryDelay: 1,
      retryBackoff: true,
      expireInSeconds: Math.min(options.expireSeconds, MAX_EXPIRE_SECONDS),
    };
    for (const name of QUEUE_NAMES) {
      // createQueue leaves an existing queue as it was: the update applies this process's settings to it.
      await boss.createQueue(name, { name, ...settings });
      await boss.updateQueue(name, { name, ...settings });
    }
  }

  /**
   * Jobs Lagoon still shows QUEUED or PROCESSING without an entry in this schema (queued under pg-boss 12, whose
   * entries are in the `pgboss` schema) get one, with the job's id (sending an id that exists is a no-op, so every
   * process may do this) and the attempts already made, so the next attempt claims the job (repo.claimJob).
   */
  private async handOver(boss: PgBoss): Promise<void> {
    const { db, logger } = this.deps;
    const orphans = await sql<{ id: string; kind: JobKind; attempts: number }>`
      select id, kind, attempts from jobs
      where status in ('QUEUED', 'PROCESSING') and deleted_at is null
        and not exists (select 1 from ${sql.table(ENTRY_TABLE)} entry where entry.id = jobs.id)
        and not exists (select 1 from ${sql.table(`${QUEUE_SCHEMA}.archive`)} old where old.id = jobs.id)
    `.execute(db);
    for (const job of orphans.rows) {
      const name = queueName(job.kind);
      await db.transaction().execute(async (trx) => {
        const sent = await boss.send(name, { jobId: job.id } satisfies Message, { id: job.id, db: executorOf(trx) });
        if (sent && job.attempts > 0)
          await sql`
            update ${sql.table(ENTRY_TABLE)}
            set retry_count = ${job.attempts}, retry_limit = greatest(retry_limit, ${job.attempts})
            where name = ${name} and id = ${job.id} and state = 'created'
          `.execute(trx);
        if (this.deps.options.notify !== false) await sql`select pg_notify(${WAKE_CHANNEL}, ${name})`.execute(trx);
      });
    }
    if (orphans.rows.length > 0) logger.info({ jobs: orphans.rows.length }, 'job queue entries handed over');
  }

  /**
   * Fails the attempts whose heartbeat (or start, before the first beat) is older than a heartbeat: their worker
   * died. pg-boss then schedules a retry, or marks the entry failed after the last attempt (which sweepGivenUp
   * follows). Locked with the read, so an entry a worker just completed, or took again, is left alone.
   */
  private async supervise(boss: PgBoss): Promise<void> {
    const { db, logger, options } = this.deps;
    try {
      await db.transaction().execute(async (trx) => {
        const stale = await sql<{ name: string; id: string }>`
          select entry.name, entry.id from ${sql.table(ENTRY_TABLE)} entry
          left join jobs on jobs.id = entry.id
          where entry.name in (${sql.join(QUEUE_NAMES)}) and entry.state = 'active'
            and greatest(jobs.heartbeat_at, entry.started_on)
              < now() - make_interval(secs => ${options.heartbeatSeconds})
          for update of entry skip locked
        `.execute(trx);
        // One by one: pg-boss 10's typings take no failure data with a list of ids.
        for (const { name, id } of stale.rows)
          await boss.fail(name, id, { message: 'the attempt missed its heartbeat' }, { db: executorOf(trx) });
        if (stale.rows.length > 0)
          logger.warn({ entries: stale.rows.map((row) => row.id) }, 'job attempts without a heartbeat failed');
      });
    } catch (error) {
      logger.warn({ err: error }, 'the job queue supervisor failed');
    }
  }
}

/**
 * pg-boss on the embedded database. PGlite is one connection: Kysely queues its users on it (a transaction holds it
 * throughout), so pg-boss's statements take their turn in that same line instead of landing inside someone else's
 * transaction. A statement with parameters is one `query`; one without may be several (pg-boss's BEGIN … COMMIT
 * blocks), run by `exec` with the rows of all of them; a block that failed halfway is rolled back before the next
 * user's turn.
 */
function serialized(db: Database, pglite: PgliteThread): PgBoss.Db {
  const run = async (text: string, values?: unknown[]) => {
    if (values?.length) return { rows: (await pglite.query(text, values)).rows };
    try {
      return { rows: (await pglite.exec(text)).flatMap((result) => result.rows) };
    } catch (error) {
      await pglite.query('rollback').catch(() => undefined);
      throw error;
    }
  };
  return { executeSql: (text: string, values?: unknown[]) => db.connection().execute(() => run(text, values)) };
}
