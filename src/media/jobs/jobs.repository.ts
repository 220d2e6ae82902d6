import { sql, type Selectable } from 'kysely';
import type { Reservation } from '../../billing/billing.types.ts';
import type { Currency } from '../../billing/money.ts';
import type { Database } from '../../db/database.ts';
import type { JobsTable } from '../../db/types.generated.ts';
import type { JobKind, JobRequest } from '../../providers/jobs/job-engine.ts';

/* The jobs table (migrations/0009_jobs.ts): every status change is one guarded UPDATE. */

export type JobStatus = 'QUEUED' | 'PROCESSING' | 'COMPLETED' | 'FAILED';
export type JobRow = Selectable<JobsTable>;

/** Whether the job has ended, completed or failed. */
export const isDone = (job: JobRow): boolean => job.status === 'COMPLETED' || job.status === 'FAILED';

/** How long the job ran (ms): until it finished, or until now while it runs; 0 before a worker took it. */
export function executionMs(job: JobRow, now: Date): number {
  if (!job.started_at) return 0;
  const end = job.finished_at ?? now;
  return Math.max(0, end.getTime() - job.started_at.getTime());
}

export interface NewJob {
  readonly id: string;
  readonly accountId: string;
  readonly apiKeyId: string | null;
  readonly kind: JobKind;
  readonly modelId: string;
  readonly providerId: string;
  readonly request: JobRequest;
  readonly quoteUsd: bigint;
  readonly reservation: Reservation;
  /** Download-URL models: the media id given out at queue time and the URL's expiry. */
  readonly download?: { readonly mediaId: string; readonly expiresAt: Date } | undefined;
  /** Also told of the job's end (src/webhooks/). */
  readonly webhookUrl?: string | undefined;
}

// Buffers (fetched reference media) go into the jsonb request as base64 and come back as Buffers.
const BYTES = '$bytes';
// The replacer reads the holder's own property: `value` is already Buffer#toJSON's array of numbers (one per byte).
const encodeRequest = (request: JobRequest): string =>
  JSON.stringify(request, function (this: Record<string, unknown>, key: string, value: unknown) {
    const raw = this[key];
    return Buffer.isBuffer(raw) ? { [BYTES]: raw.toString('base64') } : value;
  });

export function decodeRequest(stored: unknown): JobRequest {
  return JSON.parse(JSON.stringify(stored), (_key, value: unknown) =>
    typeof value === 'object' && value !== null && BYTES in value
      ? Buffer.from(String((value as Record<string, unknown>)[BYTES]), 'base64')
      : value,
  ) as JobRequest;
}

interface StoredReservation {
  id: string;
  accountId: string;
  apiKeyId: string | null;
  currency: string;
  amount: string;
  keyPeriodStart: string | null;
  requestId: string;
}

const encodeReservation = (r: Reservation): string =>
  JSON.stringify({
    id: r.id,
    accountId: r.accountId,
    apiKeyId: r.apiKeyId,
    currency: r.currency,
    amount: r.amount.toString(),
    keyPeriodStart: r.keyPeriodStart?.toISOString() ?? null,
    requestId: r.requestId,
  } satisfies StoredReservation);

export function decodeReservation(stored: unknown): Reservation {
  const r = stored as StoredReservation;
  return {
    id: r.id,
    accountId: r.accountId,
    apiKeyId: r.apiKeyId,
    currency: r.currency as Currency,
    amount: BigInt(r.amount),
    keyPeriodStart: r.keyPeriodStart === null ? null : new Date(r.keyPeriodStart),
    requestId: r.requestId,
  };
}

export async function insertJob(db: Database, job: NewJob): Promise<void> {
  await db
    .insertInto('jobs')
    .values({
      id: job.id,
      account_id: job.accountId,
      api_key_id: job.apiKeyId,
      kind: job.kind,
      model_id: job.modelId,
      provider_id: job.providerId,
      request: encodeRequest(job.request),
      quote_usd: job.quoteUsd,
      reservation_id: job.reservation.id,
      reservation: encodeReservation(job.reservation),
      media_object_id: job.download?.mediaId ?? null,
      download_expires_at: job.download?.expiresAt ?? null,
      webhook_url: job.webhookUrl ?? null,
    })
    .execute();
}

/** The caller's own job of that kind, unless unknown or deleted. */
export async function findJob(db: Database, accountId: string, kind: JobKind, id: string): Promise<JobRow | undefined> {
  return db
    .selectFrom('jobs')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('kind', '=', kind)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function jobById(db: Database, id: string): Promise<JobRow | undefined> {
  return db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Takes the job for one attempt: QUEUED (or PROCESSING left by the attempt before this one, whose worker died or
 * failed) → PROCESSING, counted. `retryCount` is pg-boss's number of earlier attempts, so of two deliveries of the
 * same attempt only one matches; a job that finished is never taken again.
 */
export async function claimJob(db: Database, id: string, retryCount: number): Promise<JobRow | undefined> {
  return db
    .updateTable('jobs')
    .set({ status: 'PROCESSING', started_at: new Date(), attempts: sql<number>`attempts + 1`, progress: 0 })
    .where('id', '=', id)
    .where('status', 'in', ['QUEUED', 'PROCESSING'])
    .where('attempts', '<=', retryCount)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** Jobs queued and not started, per model (the metrics' queue depth, read when scraped). */
export async function queuedByModel(db: Database): Promise<{ model: string; depth: number }[]> {
  const rows = await db
    .selectFrom('jobs')
    .select(['model_id', (eb) => eb.fn.countAll<string>().as('depth')])
    .where('status', '=', 'QUEUED')
    .where('deleted_at', 'is', null)
    .groupBy('model_id')
    .execute();
  return rows.map((row) => ({ model: row.model_id, depth: Number(row.depth) }));
}

export async function setProgress(db: Database, id: string, attempt: number, progress: number): Promise<void> {
  await db
    .updateTable('jobs')
    .set({ progress })
    .where('id', '=', id)
    .where('status', '=', 'PROCESSING')
    .where('attempts', '=', attempt)
    .execute();
}

/** PROCESSING → COMPLETED for the attempt that ran it: true for exactly one caller, who then settles. */
export async function markCompleted(
  db: Database,
  id: string,
  attempt: number,
  media: { objectId: string; contentType: string },
): Promise<boolean> {
  const row = await db
    .updateTable('jobs')
    .set({
      status: 'COMPLETED',
      progress: 100,
      media_object_id: media.objectId,
      content_type: media.contentType,
      finished_at: new Date(),
    })
    .where('id', '=', id)
    .where('status', '=', 'PROCESSING')
    .where('attempts', '=', attempt)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** → FAILED with its error, unless it finished already; true when this call failed it. */
export async function markFailed(db: Database, id: string, error: string): Promise<boolean> {
  const row = await db
    .updateTable('jobs')
    .set({ status: 'FAILED', error, finished_at: new Date() })
    .where('id', '=', id)
    .where('status', 'in', ['QUEUED', 'PROCESSING'])
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Marks deleted (at most `limit`) completed jobs that finished before `before` and still have media; returns their
 * media ids to delete. Rows another process is taking at the same moment are skipped, so each is taken once.
 */
export async function takeExpiredMedia(db: Database, before: Date, limit: number): Promise<string[]> {
  const rows = await db
    .updateTable('jobs')
    .set({ deleted_at: new Date() })
    .where('id', 'in', (qb) =>
      qb
        .selectFrom('jobs')
        .select('id')
        .where('status', '=', 'COMPLETED')
        .where('deleted_at', 'is', null)
        .where('media_object_id', 'is not', null)
        .where('finished_at', '<', before)
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .where('deleted_at', 'is', null)
    .returning('media_object_id')
    .execute();
  return rows.flatMap((row) => (row.media_object_id ? [row.media_object_id] : []));
}

export async function markDeleted(db: Database, id: string): Promise<boolean> {
  const row = await db
    .updateTable('jobs')
    .set({ deleted_at: new Date() })
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Mean run time in ms of the model's last completed jobs (0 when none completed yet). */
export async function averageExecutionMs(db: Database, modelId: string, recent = 20): Promise<number> {
  const row = await db
    .selectFrom((qb) =>
      qb
        .selectFrom('jobs')
        .select(sql<number>`extract(epoch from (finished_at - started_at)) * 1000`.as('ms'))
        .where('model_id', '=', modelId)
        .where('status', '=', 'COMPLETED')
        .where('started_at', 'is not', null)
        .orderBy('finished_at', 'desc')
        .limit(recent)
        .as('recent'),
    )
    .select(sql<string | number | null>`avg(ms)`.as('average'))
    .executeTakeFirst();
  return Math.round(Number(row?.average ?? 0));
}

/**
 * Jobs nothing will finish: PROCESSING whose attempt started before `processingBefore` (its worker died and the
 * queue gave up on it), or QUEUED since before `queuedBefore` (never handed out). → FAILED; returns their holds.
 */
export async function failStale(
  db: Database,
  cutoffs: { processingBefore: Date; queuedBefore: Date },
  limit = 100,
): Promise<{ id: string; reservation: unknown }[]> {
  return db
    .updateTable('jobs')
    .set({ status: 'FAILED', error: 'The job did not finish in time', finished_at: new Date() })
    .where('id', 'in', (qb) =>
      qb
        .selectFrom('jobs')
        .select('id')
        .where((eb) =>
          eb.or([
            eb.and([eb('status', '=', 'PROCESSING'), eb('started_at', '<', cutoffs.processingBefore)]),
            eb.and([eb('status', '=', 'QUEUED'), eb('created_at', '<', cutoffs.queuedBefore)]),
          ]),
        )
        .limit(limit),
    )
    .where('status', 'in', ['QUEUED', 'PROCESSING'])
    .returning(['id', 'reservation'])
    .execute();
}

/** Where the queue keeps its entries (job-queue.ts): the table, each kind's queue name, the states it never runs again. */
export interface QueueEntries {
  readonly table: string;
  readonly names: Readonly<Record<JobKind, string>>;
  readonly endedStates: readonly string[];
}

export const GIVEN_UP_ERROR = 'The job queue gave up on this job';

/**
 * Jobs Lagoon still shows QUEUED or PROCESSING whose queue entry has ended (pg-boss failed it after its last
 * attempt, its attempt expired, or it was cancelled): nothing will run them again, so → FAILED. One guarded UPDATE:
 * of several processes sweeping at once, each job is failed by one; a job that completed is never touched.
 * Nothing when the queue's table does not exist yet (no process has started the queue).
 */
export async function failGivenUp(
  db: Database,
  entries: QueueEntries,
  limit = 100,
): Promise<{ id: string; progress: number }[]> {
  const found = await sql<{ table: string | null }>`select to_regclass(${entries.table})::text as table`.execute(db);
  if (!found.rows[0]?.table) return [];
  const queueName = sql`case jobs.kind when 'audio' then ${entries.names.audio} else ${entries.names.video} end`;
  const unfinished = ['QUEUED', 'PROCESSING'] satisfies JobStatus[];
  return db
    .updateTable('jobs')
    .set({ status: 'FAILED', error: GIVEN_UP_ERROR, finished_at: new Date() })
    .where('id', 'in', (qb) =>
      qb
        .selectFrom('jobs')
        .innerJoin(sql.table(entries.table).as('entry'), (join) =>
          join.on(sql<boolean>`entry.name = ${queueName} and entry.id = jobs.id`),
        )
        .select('jobs.id')
        .where('jobs.status', 'in', unfinished)
        .where(sql<boolean>`entry.state::text in (${sql.join(entries.endedStates)})`)
        .limit(limit),
    )
    .where('status', 'in', unfinished)
    .returning(['id', 'progress'])
    .execute();
}

/**
 * FAILED jobs (finished after `since`) whose hold is still held: the process that failed them stopped before it
 * released the hold, or is releasing it now (a release is guarded, so it happens once whoever does it).
 */
export async function failedStillHeld(db: Database, since: Date, limit = 100): Promise<{ reservation: unknown }[]> {
  return db
    .selectFrom('jobs')
    .innerJoin('reservations', 'reservations.id', 'jobs.reservation_id')
    .select('jobs.reservation')
    .where('jobs.status', '=', 'FAILED')
    .where('jobs.finished_at', '>', since)
    .where('reservations.status', '=', 'held')
    .limit(limit)
    .execute();
}

/** One page of the account's jobs, newest first, after the (created_at, id) keyset of the previous page's last. */
export async function listJobs(
  db: Database,
  accountId: string,
  filter: { status?: JobStatus | undefined; modelId?: string | undefined },
  page: { limit: number; after?: { createdAt: Date; id: string } | undefined },
): Promise<JobRow[]> {
  let query = db
    .selectFrom('jobs')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    // At the millisecond a cursor carries (PostgreSQL keeps microseconds), so no row falls between two pages.
    .orderBy(sql`date_trunc('milliseconds', created_at)`, 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.modelId) query = query.where('model_id', '=', filter.modelId);
  const after = page.after;
  if (after)
    query = query.where((eb) =>
      eb.or([
        eb(sql`date_trunc('milliseconds', created_at)`, '<', after.createdAt),
        eb.and([eb(sql`date_trunc('milliseconds', created_at)`, '=', after.createdAt), eb('id', '<', after.id)]),
      ]),
    );
  return query.execute();
}
