import type { BillingService } from '../../billing/billing.service.ts';
import { limitGroupOf, type Reservation, type Usage } from '../../billing/billing.types.ts';
import { formatNano } from '../../billing/money.ts';
import type { PaidCall } from '../../billing/paid-call.ts';
import type { CatalogService } from '../../catalog/catalog.service.ts';
import type { Database } from '../../db/database.ts';
import { AppError, ValidationError } from '../../errors.ts';
import type { EventBus } from '../../events/event-bus.ts';
import type { Logger } from '../../logger.ts';
import type { JobMetrics } from '../../observability/app-metrics.ts';
import { JobRefusedError, type JobRequest } from '../../providers/jobs/job-engine.ts';
import type { JobGateway } from '../../providers/jobs/job-gateway.ts';
import type { MediaStore } from '../media-store.ts';
import type { Attempt } from './job-queue.ts';
import type { JobWebhooks } from './job-webhooks.ts';
import { resultMedia } from './job-result.ts';
import { audioUsage, videoUsage } from './job-rules.ts';
import * as repo from './jobs.repository.ts';

export interface JobRunnerOptions {
  /** Each extension of a running job's hold reaches this far ahead (renewed every quarter of it). */
  readonly holdTtlMs: number;
  /** How long a finished job's media is kept (then swept). */
  readonly mediaTtlMs: number;
}

const PROGRESS_EVERY_MS = 1_000;

/** A failure no retry can change: the engine refused the request, or no engine serves the job any more. */
class PermanentJobError extends Error {}

/**
 * Runs one delivery of a queued job (queue-workers.ts calls it; a job is delivered again after a failed attempt or a
 * dead worker). Claim → engine → media stored → PROCESSING → COMPLETED → settle. Only the attempt that makes the
 * COMPLETED transition settles, and a delivery that finds the job COMPLETED settles again, which charges nothing
 * twice (settling a reservation twice charges once), so a crash between the transition and the settlement is
 * charged once, on the next delivery. A job that fails its last attempt is FAILED and its hold released.
 */
export class JobRunner {
  /** Engines by provider id (tests may swap one in). */
  readonly engines: JobGateway;

  constructor(
    private readonly deps: {
      readonly db: Database;
      readonly billing: BillingService;
      readonly catalog: CatalogService;
      readonly media: MediaStore;
      readonly engines: JobGateway;
      readonly logger: Logger;
      readonly options: JobRunnerOptions;
      /** Where each status/progress change is announced (GraphQL jobUpdated in any process). */
      readonly events?: Pick<EventBus, 'publish'> | undefined;
      /** The queue's own record of each job (job-queue.ts), read to learn which jobs it gave up on. */
      readonly queueEntries: repo.QueueEntries;
      /** Queue wait and run time per model (the app's metrics). */
      readonly jobMetrics?: JobMetrics | undefined;
      /** Told once when a job ends, COMPLETED or FAILED (the account's webhooks, src/webhooks/). */
      readonly webhooks?: Pick<JobWebhooks, 'jobFinished'> | undefined;
    },
  ) {
    this.engines = deps.engines;
  }

  async run(jobId: string, attempt: Attempt): Promise<void> {
    const { db, logger } = this.deps;
    const job = await repo.claimJob(db, jobId, attempt.retryCount);
    if (!job) {
      await this.settleIfCompleted(jobId);
      return;
    }
    this.announce(job.id, 'PROCESSING', 0);
    const claimed = performance.now();
    const metrics = this.deps.jobMetrics;
    if (job.attempts === 1) metrics?.observeJobStart(job.model_id, (Date.now() - job.created_at.getTime()) / 1000);
    let outcome = 'failed';
    // The job's durable hold, stored with it at queue time: kept alive while this attempt runs, once at once (a job
    // that waited long in the queue gets a full hold's time) then every quarter, so no sweeper frees a running job.
    const paid = this.held(job);
    await paid.extend();
    const alive = paid.keepAlive();
    try {
      const engine = this.engines.get(job.provider_id);
      if (!engine) throw new PermanentJobError(`No engine serves provider ${job.provider_id}`);
      const model = await this.deps.catalog.findModelsByIds([job.model_id]).then(([found]) => found);
      const upstream = model?.providers.find((p) => p.providerId === job.provider_id)?.upstreamModel ?? job.model_id;
      const request = repo.decodeRequest(job.request);
      const started = Date.now();
      const result = await this.engines.run(job.provider_id, upstream, request, {
        signal: attempt.signal,
        progress: this.progressReporter(job.id, job.attempts),
      });
      // A result the engine keeps (a URL) is copied into our storage like any other.
      const media = await resultMedia(result, attempt.signal);
      // A download-URL job's media id was given out at queue time: the result is stored under it.
      const givenId = job.download_expires_at ? (job.media_object_id ?? undefined) : undefined;
      const stored = await this.deps.media.put({
        id: givenId,
        accountId: job.account_id,
        contentType: media.contentType,
        bytes: media.bytes,
        ttlMs: this.deps.options.mediaTtlMs,
      });
      const completed = await repo.markCompleted(db, job.id, job.attempts, {
        objectId: stored.id,
        contentType: media.contentType,
      });
      if (!completed) {
        // Another attempt finished it (or it was deleted) meanwhile: that one settles. A given id is that attempt's
        // object too; it expires with its retention if nobody completes the job.
        if (!givenId) await this.deps.media.delete(stored.id);
        return;
      }
      this.announce(job.id, 'COMPLETED', 100);
      outcome = 'completed';
      this.deps.webhooks?.jobFinished(job.id);
      await this.settle(paid, job, request, Date.now() - started, engine.simulated);
    } catch (error) {
      const permanent =
        error instanceof PermanentJobError || error instanceof ValidationError || error instanceof JobRefusedError;
      if (!permanent && !attempt.lastAttempt) {
        outcome = 'retry';
        logger.warn({ err: error, jobId, attempt: job.attempts }, 'job attempt failed; it will be retried');
        throw error;
      }
      if (await repo.markFailed(db, job.id, publicMessage(error))) {
        this.announce(job.id, 'FAILED', job.progress);
        this.deps.webhooks?.jobFinished(job.id);
        await paid.release();
      }
      logger.warn({ err: error, jobId }, 'job failed; its hold was released');
    } finally {
      alive.stop();
      metrics?.observeJobEnd(job.model_id, outcome, (performance.now() - claimed) / 1000);
    }
  }

  /**
   * Fails the jobs nothing will finish (see repo.failStale) and releases their holds: an attempt running past
   * `timeoutMs` × (retries + 1) plus a margin, or a job queued longer than its hold lasts. Returns how many.
   */
  async sweepStale(limits: { timeoutMs: number; retries: number }, now = new Date()): Promise<number> {
    const margin = 5 * 60_000;
    const stale = await repo.failStale(this.deps.db, {
      processingBefore: new Date(now.getTime() - limits.timeoutMs * (limits.retries + 1) - margin),
      queuedBefore: new Date(now.getTime() - this.deps.options.holdTtlMs),
    });
    for (const job of stale) this.announce(job.id, 'FAILED', 0);
    for (const job of stale) this.deps.webhooks?.jobFinished(job.id);
    for (const job of stale) if (job.reservation) await this.held(job).release();
    if (stale.length > 0) this.deps.logger.warn({ failed: stale.length }, 'stale jobs failed and their holds released');
    return stale.length;
  }

  /**
   * Follows the queue when it gives up on a job (its last attempt failed or its worker died, the attempt expired,
   * or the entry was cancelled): the job → FAILED, then every FAILED job's hold still held is released, including
   * one whose failing process stopped before releasing it. Every process runs this; each job is failed once and
   * each hold released once (both steps are guarded). Returns how many jobs this call failed.
   */
  async sweepGivenUp(now = new Date()): Promise<number> {
    const { db, logger } = this.deps;
    const failed = await repo.failGivenUp(db, this.deps.queueEntries);
    for (const job of failed) this.announce(job.id, 'FAILED', job.progress);
    for (const job of failed) this.deps.webhooks?.jobFinished(job.id);
    // A FAILED job's hold outlives it by at most one hold's time (the reservation sweeper releases it then).
    const held = await repo.failedStillHeld(db, new Date(now.getTime() - this.deps.options.holdTtlMs));
    for (const job of held) await this.held(job).release();
    if (failed.length > 0)
      logger.warn({ failed: failed.map((job) => job.id) }, 'the queue gave up on jobs: failed, holds released');
    return failed.length;
  }

  /** A delivery of a job already COMPLETED: makes sure its settlement happened (once). */
  private async settleIfCompleted(jobId: string): Promise<void> {
    const job = await repo.jobById(this.deps.db, jobId);
    if (job?.status !== 'COMPLETED') return;
    const ms = job.finished_at && job.started_at ? job.finished_at.getTime() - job.started_at.getTime() : 0;
    const engine = this.engines.get(job.provider_id);
    await this.settle(this.held(job), job, repo.decodeRequest(job.request), ms, engine?.simulated ?? false);
  }

  private async settle(
    paid: PaidCall,
    job: repo.JobRow,
    request: JobRequest,
    executionMs: number,
    simulated: boolean,
  ): Promise<void> {
    const { reservation } = paid;
    const [model] = await this.deps.catalog.findModelsByIds([job.model_id]);
    const details = {
      requestId: reservation.requestId,
      executionTimeMs: executionMs,
      notes: `${job.kind} job ${job.id}${simulated ? ' (simulated)' : ''}`,
    };
    // The model's own usage (its cost is the quote); a model gone from the catalog since: the quote held, per second.
    const usage = !model
      ? fallbackUsage(job, reservation, request, details)
      : request.kind === 'audio'
        ? audioUsage(model, request, details)
        : videoUsage(model, request, details);
    await paid.settle({ ...usage, providerId: job.provider_id });
  }

  /** A job's durable hold, as a paid call this process can keep alive, settle or release. */
  private held(job: { readonly reservation: unknown }): PaidCall {
    return this.deps.billing.resume(repo.decodeReservation(job.reservation), this.deps.options.holdTtlMs);
  }

  /** A live update only: the row is the truth, so a lost event never fails the job. */
  private announce(jobId: string, status: repo.JobStatus, progress: number): void {
    try {
      this.deps.events?.publish('lagoon:job', jobId, { status, progress });
    } catch (error) {
      this.deps.logger.warn({ err: error, jobId }, 'could not publish a job update');
    }
  }

  private progressReporter(jobId: string, attempt: number): (percent: number) => void {
    let last = 0;
    let sent = -1;
    return (percent) => {
      const value = Math.max(0, Math.min(100, Math.round(percent)));
      if (value === sent || Date.now() - last < PROGRESS_EVERY_MS) return;
      last = Date.now();
      sent = value;
      void repo
        .setProgress(this.deps.db, jobId, attempt, value)
        .then(() => this.announce(jobId, 'PROCESSING', value))
        .catch(() => undefined);
    };
  }
}

/** Seconds of media at the quote held at queue time (a model removed from the catalog after its job was queued). */
function fallbackUsage(
  job: repo.JobRow,
  reservation: Reservation,
  request: JobRequest,
  details: { requestId: string; executionTimeMs: number; notes: string },
): Usage {
  const seconds = Math.max(1, Math.round(request.durationSeconds));
  // The hold is the price in its currency's group; the other group's figure is the USD quote.
  const cost =
    limitGroupOf(reservation.currency) === 'diem'
      ? { usd: job.quote_usd, diem: reservation.amount }
      : { usd: reservation.amount, diem: reservation.amount };
  return {
    modelId: job.model_id,
    modelType: job.kind === 'video' ? 'VIDEO' : 'MUSIC',
    unitType: 'seconds',
    notes: details.notes,
    lines: [
      {
        sku: `${job.model_id}-${job.kind}-seconds`,
        units: String(seconds),
        pricePerUnitUsd: formatNano(job.quote_usd / BigInt(seconds)),
        cost,
      },
    ],
    inferenceDetails: { requestId: details.requestId, inferenceExecutionTime: details.executionTimeMs },
  };
}

/** What a caller may see of a failure: our own errors' messages, a generic line for anything else. */
function publicMessage(error: unknown): string {
  if (error instanceof AppError || error instanceof PermanentJobError) return error.message;
  return 'The engine failed to produce the media';
}
