import { randomUUID } from 'node:crypto';
import { modelPrivacyOf, keyOf, type AccountAuthContext, type AuthContext } from '../../auth/auth-context.ts';
import { requireAccount } from '../../auth/permissions.ts';
import type { BillingService } from '../../billing/billing.service.ts';
import type { Price } from '../../billing/billing.types.ts';
import { nanoToNumber } from '../../billing/money.ts';
import type { CatalogService } from '../../catalog/catalog.service.ts';
import type { CatalogModel } from '../../catalog/model.ts';
import type { Database } from '../../db/database.ts';
import {
  clip,
  ForbiddenError,
  InvalidModelError,
  NotFoundError,
  UpstreamError,
  ValidationError,
} from '../../errors.ts';
import type { EventBus } from '../../events/event-bus.ts';
import type { Logger } from '../../logger.ts';
import type { JobKind, JobRequest } from '../../providers/jobs/job-engine.ts';
import type { RateLimiter } from '../../rate-limits/rate-limiter.ts';
import { parseInput } from '../../validation.ts';
import type { MediaLinks } from '../media-links.ts';
import type { MediaInfo, MediaStore } from '../media-store.ts';
import { DOWNLOAD_URL_TTL_MS, downloadUrlExpiry, usesDownloadUrl } from './job-delivery.ts';
import type { JobInputFetcher } from './job-input-fetcher.ts';
import { CompleteJobInput, RetrieveJobInput } from './job.inputs.ts';
import type { JobQueue } from './job-queue.ts';
import type { JobWebhooks } from './job-webhooks.ts';
import { decodeJobCursor, UUID } from './job-cursor.ts';
import { webhookUrlOf } from './job-queue.inputs.ts';
import * as repo from './jobs.repository.ts';
import {
  parseAudioJob,
  parseAudioQuote,
  parseVideoJob,
  parseVideoQuote,
  quoteAudio,
  quoteVideo,
  videoQuoteInput,
  withInputDuration,
} from './job-rules.ts';

export interface JobServiceOptions {
  /** How long the hold taken at queue time lasts before a worker starts extending it (queue wait included). */
  readonly holdTtlMs: number;
}

export interface QueuedJob {
  readonly model: string;
  readonly queue_id: string;
  /** Only the audio handle has it (the contract's video handle is model, queue_id and download_url). */
  readonly status?: 'QUEUED';
  /** Models that deliver by URL (job-delivery.ts): where the media will be, valid 24 hours. */
  readonly download_url?: string;
}

/** The timing every JSON retrieve answer carries (ms), as the original's clients expect both fields. */
interface JobTiming {
  readonly average_execution_time: number;
  readonly execution_duration: number;
}

/**
 * What retrieve answers: a status (running, failed, or done with a download URL), or the stored media. A waiting
 * job answers PROCESSING too: the public status enum has no QUEUED (GraphQL keeps the finer states).
 */
export type Retrieved =
  | {
      readonly kind: 'status';
      readonly body: JobTiming &
        (
          | { readonly status: 'PROCESSING' }
          | { readonly status: 'FAILED'; readonly error: string }
          | { readonly status: 'COMPLETED'; readonly download_url: string }
        );
    }
  | {
      readonly kind: 'media';
      /** Its bytes are read as they are sent (ranges included), from whichever store holds them. */
      readonly media: MediaInfo;
      /** `delete_media_on_completion`: run once the last byte was sent. */
      readonly afterSent?: (() => Promise<void>) | undefined;
    };

/** Where the caller reached the API (a URL is built on it), and the clock. */
export interface JobCallContext {
  readonly origin?: string | undefined;
  readonly now?: Date | undefined;
}

const CATALOG_TYPE: Record<JobKind, 'music' | 'video'> = { audio: 'music', video: 'video' };
const AVERAGE_TTL_MS = 5_000;

/**
 * Queued music/audio and video jobs (POST /<kind>/quote, /queue, /retrieve, /complete). The quote is held at queue
 * time, and the job row and its pg-boss entry are written in one transaction; the worker (job-runner.ts) charges it when it
 * completes or releases it when it fails. Another account's job, an unknown one and a deleted one look alike: 404.
 */
export class JobService {
  private readonly averages = new Map<string, { value: number; until: number }>();

  constructor(
    private readonly deps: {
      readonly db: Database;
      readonly billing: BillingService;
      readonly catalog: CatalogService;
      readonly media: MediaStore;
      /** Signed URLs of download-URL models' media (given out at queue time). */
      readonly links: Pick<MediaLinks, 'urlFor'>;
      readonly queue: Pick<JobQueue, 'send' | 'ready'>;
      /** Remote media of video jobs: fetched under the public-address policy and probed, before anything is held. */
      readonly inputs: Pick<JobInputFetcher, 'fetchAll'>;
      readonly logger: Logger;
      readonly options: JobServiceOptions;
      /** Live job updates (GraphQL jobUpdated); without it, watch yields the current state only. */
      readonly events?: Pick<EventBus, 'publish' | 'subscribe'> | undefined;
      /** Per-key limits: a job counts when it is queued (not when a worker picks it up, nor when polled). */
      readonly rateLimiter?: RateLimiter | undefined;
      /** Judges a job's webhook_url (src/webhooks/): the address policy, an endpoint whose secret signs it. */
      readonly webhooks?: Pick<JobWebhooks, 'checkJobWebhookUrl'> | undefined;
    },
  ) {}

  /** The caller's own job of either kind; undefined when unknown, another account's or deleted. */
  async get(auth: AuthContext, id: string): Promise<repo.JobRow | undefined> {
    const account = requireAccount(auth);
    if (!UUID.test(id)) return undefined;
    const job = await repo.jobById(this.deps.db, id);
    return job && job.account_id === account.accountId && job.deleted_at === null ? job : undefined;
  }

  /** The caller's jobs, newest first: `first` (1–100) after the cursor of a previous page's last job. */
  async list(
    auth: AuthContext,
    args: {
      status?: repo.JobStatus | undefined;
      model?: string | undefined;
      first: number;
      after?: string | undefined;
    },
  ): Promise<{ jobs: repo.JobRow[]; hasNextPage: boolean }> {
    const account = requireAccount(auth);
    if (!Number.isInteger(args.first) || args.first < 1 || args.first > 100)
      throw new ValidationError('first must be 1 to 100', [{ path: ['first'], message: 'Must be 1 to 100' }]);
    const after = args.after === undefined ? undefined : decodeJobCursor(args.after);
    const rows = await repo.listJobs(
      this.deps.db,
      account.accountId,
      { status: args.status, modelId: args.model },
      { limit: args.first + 1, after },
    );
    return { jobs: rows.slice(0, args.first), hasNextPage: rows.length > args.first };
  }

  /**
   * A download-URL model's job: its download URL (the one given at queue time while valid; once COMPLETED, as
   * retrieve answers it). Undefined for other models, a FAILED or deleted job, or media no longer kept.
   */
  async downloadUrlOf(job: repo.JobRow, context: JobCallContext = {}): Promise<string | undefined> {
    const now = context.now ?? new Date();
    const mediaId = job.media_object_id;
    if (!job.download_expires_at || !mediaId || job.deleted_at || job.status === 'FAILED') return undefined;
    if (job.status !== 'COMPLETED') {
      if (job.download_expires_at <= now) return undefined;
      const pending = { id: mediaId, storage: this.deps.media.storage };
      return (await this.deps.links.urlFor(pending, job.download_expires_at, context.origin)).url;
    }
    const media = await this.deps.media.info(mediaId, now);
    if (!media) return undefined;
    const expiresAt = downloadUrlExpiry(job.download_expires_at, media, now);
    return (await this.deps.links.urlFor(media, expiresAt, context.origin)).url;
  }

  /** The stored media of a COMPLETED job while it is kept (a signed URL is made from it). */
  async mediaOf(job: repo.JobRow, now = new Date()): Promise<MediaInfo | undefined> {
    if (job.status !== 'COMPLETED' || !job.media_object_id || job.deleted_at) return undefined;
    return this.deps.media.info(job.media_object_id, now);
  }

  /**
   * The caller's job now, then again at each status or progress change until it is COMPLETED or FAILED (any
   * process's worker publishes them, see job-runner.ts). Another account's job: 404, and no events.
   */
  async watch(auth: AuthContext, id: string): Promise<AsyncIterableIterator<repo.JobRow>> {
    const job = await this.get(auth, id);
    if (!job) throw notFound();
    const events = this.deps.events?.subscribe('lagoon:job', job.id);
    const db = this.deps.db;
    async function* updates(): AsyncGenerator<repo.JobRow> {
      try {
        let last: repo.JobRow | undefined = job;
        yield job as repo.JobRow;
        if (!events || repo.isDone(job as repo.JobRow)) return;
        // Subscribed after the first read: a change in between is caught by reading the row again.
        for (let next = true; next;) {
          const row: repo.JobRow | undefined = await repo.jobById(db, id);
          if (!row || row.deleted_at) return;
          if (row.status !== last?.status || row.progress !== last.progress) yield row;
          last = row;
          if (repo.isDone(row)) return;
          next = !(await events.next()).done;
        }
      } finally {
        await events?.return?.();
      }
    }
    return updates();
  }

  /** The price the same input would be charged when queued; nothing is held or charged. */
  async quote(auth: AuthContext, kind: JobKind, raw: unknown): Promise<{ quote: number }> {
    const account = requireAccount(auth);
    const model = await this.resolveModel(account, kind, raw);
    if (kind === 'audio') return { quote: nanoToNumber(parseAudioQuote(model, raw).price.usd) };
    // An upscale quoted by its video_url: priced by the video's length, as its queue would be.
    const video = videoQuoteInput(model, raw);
    const inputs = video ? await this.deps.inputs.fetchAll([video]) : [];
    return { quote: nanoToNumber(parseVideoQuote(model, raw, inputs).price.usd) };
  }

  async queue(auth: AuthContext, kind: JobKind, raw: unknown, context: JobCallContext = {}): Promise<QueuedJob> {
    const account = requireAccount(auth);
    const model = await this.resolveModel(account, kind, raw);
    const { request, price } = await this.parseJob(kind, model, raw);
    const webhookUrl = webhookUrlOf(raw);
    if (webhookUrl) await this.deps.webhooks?.checkJobWebhookUrl(account.accountId, webhookUrl);
    const binding = model.providers[0];
    if (!binding) throw new UpstreamError(`Model ${model.id} has no provider`, 'MODEL_OFFLINE');
    await this.deps.rateLimiter?.admit(account, model); // before the hold: a 429 is never charged
    const id = randomUUID();
    // A download-URL model's media id and URL expiry are fixed now: the URL is answered before the media exists.
    const download = usesDownloadUrl(model)
      ? { mediaId: randomUUID(), expiresAt: new Date((context.now ?? new Date()).getTime() + DOWNLOAD_URL_TTL_MS) }
      : undefined;
    // Every bad input is refused above, before anything is held; 402 here when funds or the key limit fall short.
    // Durable: held in the database (not this process's balance lease), so any worker process can settle it.
    const paidCall = { ttlMs: this.deps.options.holdTtlMs, durable: true };
    await this.deps.billing.paidCall(
      account,
      price,
      async (paid) => {
        await this.deps.queue.ready();
        // The row and its queue entry in one transaction: a crash leaves both or neither, never a job nothing runs.
        // Never queued (and no row): the hold goes back at once, as nothing will run it.
        await this.deps.db.transaction().execute(async (trx) => {
          await repo.insertJob(trx, {
            id,
            accountId: account.accountId,
            apiKeyId: keyOf(account)?.id ?? null,
            kind,
            modelId: model.id,
            providerId: binding.providerId,
            request,
            quoteUsd: price.usd,
            reservation: paid.reservation,
            download,
            webhookUrl,
          });
          await this.deps.queue.send(kind, id, trx);
        });
        // Queued: the job owns its hold now; the runner settles it, or a sweeper releases it when the job fails.
        paid.handOff();
      },
      paidCall,
    );
    const handle =
      kind === 'audio'
        ? { model: model.id, queue_id: id, status: 'QUEUED' as const }
        : { model: model.id, queue_id: id };
    if (!download) return handle;
    const media = { id: download.mediaId, storage: this.deps.media.storage };
    const { url } = await this.deps.links.urlFor(media, download.expiresAt, context.origin);
    return { ...handle, download_url: url };
  }

  /**
   * The model's recent mean run time, read at most every AVERAGE_TTL_MS per model: pollers call retrieve often, and
   * the figure moves slowly (bench/jobs.ts: one query fewer per status answer).
   */
  private async averageExecutionMs(modelId: string): Promise<number> {
    const cached = this.averages.get(modelId);
    if (cached && cached.until > Date.now()) return cached.value;
    const value = await repo.averageExecutionMs(this.deps.db, modelId);
    this.averages.set(modelId, { value, until: Date.now() + AVERAGE_TTL_MS });
    return value;
  }

  async retrieve(auth: AuthContext, kind: JobKind, raw: unknown, context: JobCallContext = {}): Promise<Retrieved> {
    const account = requireAccount(auth);
    const now = context.now ?? new Date();
    const input = parseInput(RetrieveJobInput, raw);
    const job = await this.ownJob(account, kind, input.queue_id);
    const timing = async (): Promise<JobTiming> => ({
      average_execution_time: await this.averageExecutionMs(job.model_id),
      execution_duration: repo.executionMs(job, now),
    });
    if (job.status === 'FAILED') {
      return { kind: 'status', body: { status: 'FAILED', error: job.error ?? 'failed', ...(await timing()) } };
    }
    if (job.status === 'COMPLETED') {
      const media = job.media_object_id ? await this.deps.media.info(job.media_object_id, now) : undefined;
      if (!media) throw notFound();
      if (job.download_expires_at) {
        // The caller downloads from the URL (and completes or DELETEs it): delete_media_on_completion does not apply.
        const expiresAt = downloadUrlExpiry(job.download_expires_at, media, now);
        const { url } = await this.deps.links.urlFor(media, expiresAt, context.origin);
        return { kind: 'status', body: { status: 'COMPLETED', download_url: url, ...(await timing()) } };
      }
      const afterSent = input.delete_media_on_completion ? () => this.deleteMedia(job) : undefined;
      return { kind: 'media', media, afterSent };
    }
    return { kind: 'status', body: { status: 'PROCESSING', ...(await timing()) } };
  }

  /** The caller has the media: it is deleted, and the job answers 404 from now on. */
  async complete(auth: AuthContext, kind: JobKind, raw: unknown): Promise<{ success: true }> {
    const account = requireAccount(auth);
    const input = parseInput(CompleteJobInput, raw);
    const job = await this.ownJob(account, kind, input.queue_id);
    await this.deleteMedia(job);
    return { success: true };
  }

  private async deleteMedia(job: repo.JobRow): Promise<void> {
    await repo.markDeleted(this.deps.db, job.id);
    if (job.media_object_id) await this.deps.media.delete(job.media_object_id);
  }

  /**
   * Retention: completed jobs whose media is older than `retentionMs` are deleted (the job answers 404, like a
   * completed one), in batches. Several processes may sweep at once: each job is taken by one of them.
   */
  async sweepRetention(retentionMs: number, now = new Date(), batch = 200): Promise<number> {
    const before = new Date(now.getTime() - retentionMs);
    let swept = 0;
    for (let taken = batch; taken === batch;) {
      const mediaIds = await repo.takeExpiredMedia(this.deps.db, before, batch);
      for (const id of mediaIds) await this.deps.media.delete(id);
      taken = mediaIds.length;
      swept += taken;
    }
    if (swept > 0) this.deps.logger.debug({ swept }, 'completed jobs past their retention deleted');
    return swept;
  }

  private async ownJob(account: AccountAuthContext, kind: JobKind, id: string): Promise<repo.JobRow> {
    const job = UUID.test(id) ? await repo.findJob(this.deps.db, account.accountId, kind, id) : undefined;
    if (!job) throw notFound();
    return job;
  }

  private async parseJob(
    kind: JobKind,
    model: CatalogModel,
    raw: unknown,
  ): Promise<{ request: JobRequest; price: Price }> {
    if (kind === 'audio') {
      const request = parseAudioJob(model, raw);
      return { request, price: quoteAudio(model, request) };
    }
    const parsed = parseVideoJob(model, raw);
    // The bytes travel in the stored request (jobs.repository.ts encodes Buffers), so any worker process has them.
    const inputs = parsed.remote.length > 0 ? await this.deps.inputs.fetchAll(parsed.remote) : [];
    // An upscale without a duration lasts as long as its video: priced only now that the video has been read.
    const request = parsed.durationFromInput ? withInputDuration(model, parsed.request, inputs) : parsed.request;
    return { request: { ...request, inputs }, price: quoteVideo(model, request) };
  }

  private async resolveModel(account: AccountAuthContext, kind: JobKind, raw: unknown): Promise<CatalogModel> {
    const name = typeof raw === 'object' && raw !== null ? (raw as { model?: unknown }).model : undefined;
    if (typeof name !== 'string' || name === '')
      throw new ValidationError('model is required', [
        { path: ['model'], message: `a ${CATALOG_TYPE[kind]} model id from GET /api/v1/models` },
      ]);
    const lookup = await this.deps.catalog.lookupModel(name, CATALOG_TYPE[kind]);
    if (!lookup.model) {
      if (lookup.otherType)
        throw new InvalidModelError(
          `Model ${clip(name)} is a ${lookup.otherType} model; this route needs a ${CATALOG_TYPE[kind]} model`,
        );
      throw new InvalidModelError(
        `Unknown model ${clip(name)}: use a model from GET /api/v1/models?type=${CATALOG_TYPE[kind]}`,
      );
    }
    const model = lookup.model;
    if (modelPrivacyOf(account) === 'PRIVATE_ONLY' && model.privacy !== 'private')
      throw new ForbiddenError(`This API key may only use private models; ${model.id} is ${model.privacy}`);
    if (model.offline) throw new UpstreamError(`Model ${model.id} is offline`, 'MODEL_OFFLINE');
    return model;
  }
}

const notFound = () => new NotFoundError('No such job, or its media was deleted', 'MEDIA_NOT_FOUND');
