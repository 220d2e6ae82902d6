import { formatNano } from '../../src/billing/money.ts';
import { ForbiddenError, InvalidModelError, NotFoundError, UpstreamError, ValidationError } from '../../src/errors.ts';
import { encodeJobCursor } from '../../src/media/jobs/job-cursor.ts';
import type { JobRow, JobStatus } from '../../src/media/jobs/jobs.repository.ts';
import type { JobKind } from '../../src/providers/jobs/job-engine.ts';
import { builder } from '../builder.ts';
import type { GraphQLContext } from '../context.ts';
import { MediaFileRef, PAID_MEDIA_ERRORS, type MediaFile } from './media.ts';

/*
 * Queued music/audio and video jobs (the GraphQL side of POST /audio|video/quote, /queue, /retrieve): the same
 * JobService methods, and the inputs are the REST bodies as JSON, validated by the same zod schemas
 * (src/media/jobs/job-queue.inputs.ts), so every rule lives in one place.
 */

export const JobStatusEnum = builder.enumType('JobStatus', {
  values: ['QUEUED', 'PROCESSING', 'COMPLETED', 'FAILED'] as const,
});

export const JobKindEnum = builder.enumType('JobKind', {
  values: { AUDIO: { value: 'audio' }, VIDEO: { value: 'video' } } as const,
});

/** A signed URL for the job's stored result (no copy: the object the runner stored), while it is kept. */
async function jobMedia(context: GraphQLContext, job: JobRow): Promise<MediaFile | null> {
  const info = await context.services.jobs.service.mediaOf(job);
  if (!info) return null;
  const link = await context.services.media.links.link(info, undefined, context.origin);
  return {
    contentType: info.contentType,
    url: link.url,
    expiresAt: link.expiresAt,
    byteSize: info.byteSize,
    base64: null,
  };
}

export const JobRef = builder.objectRef<JobRow>('Job').implement({
  description: 'A queued audio or video job (REST `queue_id`).',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The REST `queue_id`.' }),
    kind: t.field({ type: JobKindEnum, resolve: (job) => job.kind as JobKind }),
    model: t.exposeString('model_id'),
    status: t.field({ type: JobStatusEnum, resolve: (job) => job.status as JobStatus }),
    progress: t.exposeInt('progress', { description: '0–100, where the engine reports it.' }),
    createdAt: t.field({ type: 'DateTime', resolve: (job) => job.created_at }),
    startedAt: t.field({ type: 'DateTime', nullable: true, resolve: (job) => job.started_at }),
    finishedAt: t.field({ type: 'DateTime', nullable: true, resolve: (job) => job.finished_at }),
    error: t.exposeString('error', { nullable: true, description: 'Why it FAILED.' }),
    quote: t.field({
      type: 'Decimal',
      description: 'The price in USD held at queue time and charged when it completes.',
      resolve: (job) => formatNano(job.quote_usd),
    }),
    downloadUrl: t.string({
      nullable: true,
      description:
        'Models that deliver by URL: where the result is downloaded from once COMPLETED (REST `download_url`), ' +
        'valid 24 hours; null for other models, and once FAILED or deleted.',
      resolve: async (job, _args, context) =>
        (await context.services.jobs.service.downloadUrlOf(job, { origin: context.origin })) ?? null,
    }),
    media: t.field({
      type: MediaFileRef,
      nullable: true,
      description: 'The result as a signed URL, once COMPLETED (null before, and once the media is deleted).',
      resolve: (job, _args, context) => jobMedia(context, job),
    }),
  }),
});

const quoteField = (kind: JobKind) =>
  builder.queryField(kind === 'audio' ? 'quoteAudio' : 'quoteVideo', (t) =>
    t.field({
      type: 'Float',
      description: `The USD price of POST /${kind}/queue with this body (REST /${kind}/quote); nothing is held.`,
      authScopes: { account: true },
      args: { input: t.arg({ type: 'JSONObject', required: true, description: `The POST /${kind}/quote body.` }) },
      errors: { types: [ValidationError, InvalidModelError, ForbiddenError, UpstreamError] },
      resolve: async (_root, { input }, context) =>
        (await context.services.jobs.service.quote(context.auth, kind, input)).quote,
    }),
  );

const queueField = (kind: JobKind) =>
  builder.mutationField(kind === 'audio' ? 'queueAudio' : 'queueVideo', (t) =>
    t.field({
      type: JobRef,
      description: `Queues a ${kind} job (REST POST /${kind}/queue): its quote is held now and charged on completion.`,
      authScopes: { account: true },
      args: { input: t.arg({ type: 'JSONObject', required: true, description: `The POST /${kind}/queue body.` }) },
      errors: { types: PAID_MEDIA_ERRORS },
      resolve: async (_root, { input }, context) => {
        const { service } = context.services.jobs;
        const queued = await service.queue(context.auth, kind, input);
        const job = await service.get(context.auth, queued.queue_id);
        if (!job) throw new Error(`queued job ${queued.queue_id} is missing`);
        return job;
      },
    }),
  );

const CompletedJob = builder.simpleObject('CompletedJob', {
  description: 'A job whose media was deleted: it answers null (GraphQL) or 404 (REST) from now on.',
  fields: (t) => ({ id: t.id(), success: t.boolean() }),
});

builder.mutationField('completeJob', (t) =>
  t.field({
    type: CompletedJob,
    description:
      'The caller has the media (REST POST /audio|video/complete): it is deleted, and the job is gone. ' +
      'Unknown, another account’s or already deleted: NotFoundError.',
    authScopes: { account: true },
    args: { id: t.arg.id({ required: true }) },
    errors: { types: [NotFoundError, ValidationError] },
    resolve: async (_root, { id }, context) => {
      const { service } = context.services.jobs;
      const queueId = String(id);
      const job = await service.get(context.auth, queueId);
      if (!job) throw new NotFoundError('No such job, or its media was deleted', 'MEDIA_NOT_FOUND');
      await service.complete(context.auth, job.kind as JobKind, { model: job.model_id, queue_id: queueId });
      return { id: queueId, success: true };
    },
  }),
);

quoteField('audio');
quoteField('video');
queueField('audio');
queueField('video');

builder.queryFields((t) => ({
  job: t.field({
    type: JobRef,
    nullable: true,
    description: 'One of the caller’s jobs; null when unknown, another account’s, or deleted.',
    authScopes: { account: true },
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, { id }, context) =>
      (await context.services.jobs.service.get(context.auth, String(id))) ?? null,
  }),
  jobs: t.connection({
    type: JobRef,
    description: 'The caller’s jobs, newest first: `first` (1–100, default 20) after a cursor.',
    authScopes: { account: true },
    args: {
      status: t.arg({ type: JobStatusEnum, required: false }),
      model: t.arg.string({ required: false }),
    },
    resolve: async (_root, args, context) => {
      const page = await context.services.jobs.service.list(context.auth, {
        status: args.status ?? undefined,
        model: args.model ?? undefined,
        first: args.first ?? 20,
        after: args.after ?? undefined,
      });
      const edges = page.jobs.map((job) => ({ cursor: encodeJobCursor(job), node: job }));
      return {
        edges,
        pageInfo: {
          hasNextPage: page.hasNextPage,
          hasPreviousPage: args.after !== null && args.after !== undefined,
          startCursor: edges[0]?.cursor ?? null,
          endCursor: edges.at(-1)?.cursor ?? null,
        },
      };
    },
  }),
}));

builder.subscriptionFields((t) => ({
  jobUpdated: t.field({
    type: JobRef,
    description:
      'The job now, then at each change (QUEUED → PROCESSING with progress → COMPLETED with media | FAILED), ' +
      'until it finishes (SSE at /graphql/stream). Another account’s job is refused.',
    authScopes: { account: true },
    args: { id: t.arg.id({ required: true }) },
    subscribe: (_root, { id }, context) => context.services.jobs.service.watch(context.auth, String(id)),
    resolve: (job) => job,
  }),
}));
