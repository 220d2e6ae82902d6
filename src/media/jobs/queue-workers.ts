import { CompiledQuery, sql } from 'kysely';
import type PgBoss from 'pg-boss';
import type { Database } from '../../db/database.ts';
import type { Logger } from '../../logger.ts';
import { continueTrace, tracingOn, type TraceCarrier } from '../../observability/tracing.ts';

/*
 * The workers over pg-boss 10 (job-queue.ts): each is a loop that fetches one entry of its queue, runs the handler
 * and completes or fails the entry; `concurrency` loops per queue. What pg-boss 12 did inside `work()` is done
 * here: the attempt's AbortSignal (aborted when the attempt runs out of time, when its entry is no longer this
 * attempt's — failed by the supervisor, expired, cancelled — and when the process stops), and its heartbeat on the
 * jobs row, which the supervisor in job-queue.ts reads to hand out again an attempt whose worker died.
 */

export interface Attempt {
  /** 0 on the first attempt, then one more each time the job is handed out again. */
  readonly retryCount: number;
  readonly lastAttempt: boolean;
  readonly signal: AbortSignal;
}

export type JobHandler = (jobId: string, attempt: Attempt) => Promise<void>;

/** pg-boss's schema. Not `pgboss`: databases that ran pg-boss 12 have its newer schema there, which 10 cannot use. */
export const QUEUE_SCHEMA = 'lagoon_queue';
export const ENTRY_TABLE = `${QUEUE_SCHEMA}.job`;

export interface Message extends TraceCarrier {
  readonly jobId: string;
}

type Entry = PgBoss.JobWithMetadata<Message>;

/** pg-boss's statements run on `db` (a caller's transaction): its writes commit or roll back with the caller's. */
export function executorOf(db: Database): PgBoss.Db {
  return {
    executeSql: async (text: string, values?: unknown[]) => {
      const result = await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(text, values ?? []));
      return { rows: result.rows };
    },
  };
}

interface Running {
  readonly queue: string;
  readonly entry: Entry;
  readonly controller: AbortController;
}

interface Loop {
  woken: boolean;
  wake: (() => void) | undefined;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class QueueWorkers {
  private readonly loops = new Map<string, Loop[]>();
  private readonly loopsDone: Promise<void>[] = [];
  private readonly running = new Set<Running>();
  private stopping = false;

  constructor(
    private readonly deps: {
      readonly boss: PgBoss;
      readonly db: Database;
      readonly logger: Logger;
      readonly handler: JobHandler;
      readonly heartbeatSeconds: number;
      readonly pollingSeconds: number;
    },
  ) {}

  /** `concurrency` loops on the queue, each running one attempt at a time. */
  start(queue: string, concurrency: number): void {
    const loops = this.loops.get(queue) ?? [];
    this.loops.set(queue, loops);
    for (let i = 0; i < concurrency; i += 1) {
      const loop: Loop = { woken: false, wake: undefined };
      loops.push(loop);
      this.loopsDone.push(this.loop(queue, loop));
    }
  }

  /** A job was queued: the queue's idle loops fetch now (a busy one fetches as soon as it is free anyway). */
  wake(queue: string): void {
    for (const loop of this.loops.get(queue) ?? []) {
      loop.woken = true;
      loop.wake?.();
    }
  }

  wakeAll(): void {
    for (const queue of this.loops.keys()) this.wake(queue);
  }

  /**
   * No new attempts; running ones get `graceMs` to finish. Then each one left is failed (so it is retried, or given
   * up on after its last attempt) and its signal aborted, and the handlers get a moment to wind down.
   */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    this.wakeAll();
    const allDone = Promise.all(this.loopsDone);
    await Promise.race([allDone, sleep(graceMs)]);
    for (const attempt of this.running) {
      await this.settle(attempt, { message: 'the worker stopped while the attempt ran' });
      attempt.controller.abort(new Error('the worker is stopping'));
    }
    await Promise.race([allDone, sleep(2_000)]);
  }

  private async loop(queue: string, loop: Loop): Promise<void> {
    const { boss, logger, pollingSeconds } = this.deps;
    while (!this.stopping) {
      loop.woken = false;
      let entry: Entry | undefined;
      try {
        [entry] = await boss.fetch<Message>(queue, { includeMetadata: true, batchSize: 1 });
      } catch (error) {
        logger.warn({ err: error, queue }, 'fetching from the job queue failed');
      }
      if (entry && !this.stopping) {
        await this.run(queue, entry);
        continue;
      }
      if (loop.woken || this.stopping) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollingSeconds * 1000);
        loop.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      loop.wake = undefined;
    }
  }

  private async run(queue: string, entry: Entry): Promise<void> {
    const { handler, heartbeatSeconds, logger } = this.deps;
    const controller = new AbortController();
    const attempt: Running = { queue, entry, controller };
    this.running.add(attempt);
    // pg-boss reads the expiry as PostgreSQL's numeric, which arrives as a string.
    const expireMs = Number(entry.expireInSeconds) * 1000;
    const expiry = setTimeout(() => controller.abort(new Error('the attempt ran out of time')), expireMs);
    const beat = setInterval(() => void this.beat(attempt), (heartbeatSeconds * 1000) / 2);
    expiry.unref();
    beat.unref();
    try {
      const run = () =>
        handler(entry.data.jobId, {
          retryCount: entry.retryCount,
          lastAttempt: entry.retryCount >= entry.retryLimit,
          signal: controller.signal,
        });
      // The attempt continues the trace of the request that queued the job (its traceparent is in the entry).
      await (tracingOn()
        ? continueTrace(
            entry.data,
            'job run',
            { 'lagoon.job.id': entry.data.jobId, 'lagoon.job.kind': queue, 'lagoon.job.attempt': entry.retryCount },
            run,
          )
        : run());
      await this.settle(attempt, undefined);
    } catch (error) {
      await this.settle(attempt, { message: error instanceof Error ? error.message : String(error) });
    } finally {
      clearTimeout(expiry);
      clearInterval(beat);
      this.running.delete(attempt);
    }
    if (controller.signal.aborted) logger.debug({ jobId: entry.data.jobId }, 'a job attempt was cut off');
  }

  /**
   * The attempt's heartbeat: the jobs row's `heartbeat_at`, written only while the entry is still this attempt's
   * (active, at this attempt's retry count). When it is not, the attempt is aborted: something else ended it.
   */
  private async beat(attempt: Running): Promise<void> {
    const { entry, queue, controller } = attempt;
    if (controller.signal.aborted) return;
    try {
      const result = await sql<{ n: number }>`
        with entry as (
          select id from ${sql.table(ENTRY_TABLE)}
          where name = ${queue} and id = ${entry.id} and state = 'active' and retry_count = ${entry.retryCount}
        ), beat as (
          update jobs set heartbeat_at = now() where id in (select id from entry) returning id
        )
        select count(*)::int as n from entry
      `.execute(this.deps.db);
      if (Number(result.rows[0]?.n ?? 0) === 0)
        controller.abort(new Error('the queue entry of this attempt has ended'));
    } catch (error) {
      // A beat that could not be written says nothing about the attempt: it goes on (a later beat may work).
      this.deps.logger.warn({ err: error, jobId: entry.data.jobId }, 'a job heartbeat could not be written');
    }
  }

  /**
   * Completes (no failure) or fails the entry, only while it is still this attempt's: one the supervisor failed and
   * another worker took since is left alone. A failed write is logged; the supervisor ends the entry then.
   */
  private async settle(attempt: Running, failure: { message: string } | undefined): Promise<void> {
    const { boss, db, logger } = this.deps;
    const { entry, queue } = attempt;
    try {
      await db.transaction().execute(async (trx) => {
        const own = await sql`
          select id from ${sql.table(ENTRY_TABLE)}
          where name = ${queue} and id = ${entry.id} and state = 'active' and retry_count = ${entry.retryCount}
          for update
        `.execute(trx);
        if (own.rows.length === 0) return;
        if (failure) await boss.fail(queue, entry.id, failure, { db: executorOf(trx) });
        else await boss.complete(queue, entry.id, {}, { db: executorOf(trx) });
      });
    } catch (error) {
      logger.warn({ err: error, jobId: entry.data.jobId }, 'the job queue entry could not be settled');
    }
  }
}
