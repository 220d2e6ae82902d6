import { z } from 'zod';
import {
  AudioJobInput,
  AudioQuoteInput,
  VideoJobInput,
  VideoQuoteInput,
} from '../../src/media/jobs/job-queue.inputs.ts';
import { CompleteJobInput, RetrieveJobInput } from '../../src/media/jobs/job.inputs.ts';
import type { JobKind } from '../../src/providers/jobs/job-engine.ts';
import { json } from '../http.ts';
import type { Route } from '../router.ts';
import { mediaReply } from './media.ts';

/* Queued music/audio and video jobs: quote, queue, poll (retrieve) and complete, per kind. */

const BODIES = {
  audio: { queue: AudioJobInput, quote: AudioQuoteInput },
  video: { queue: VideoJobInput, quote: VideoQuoteInput },
} as const;
const Quote = z.object({ quote: z.number().describe('USD the job would be charged') });
const VideoQueued = z.object({
  model: z.string(),
  queue_id: z.string().describe('Poll /retrieve with it'),
  download_url: z
    .string()
    .optional()
    .describe('Models that deliver by URL: the media is fetched from here once COMPLETED; valid 24 hours'),
});
// The contract's audio handle carries a status; its video handle does not.
const QUEUED: Record<JobKind, z.ZodType> = {
  audio: VideoQueued.extend({ status: z.literal('QUEUED') }),
  video: VideoQueued,
};

/**
 * A video job's clips and pictures may come inline as data URLs (a quote may be sent the same body); an audio job
 * has no media inputs.
 */
const VIDEO_BODY: Record<JobKind, Pick<Route, 'bodyLimit'>> = { audio: {}, video: { bodyLimit: 'videoJob' } };

const TAGS: Record<JobKind, string> = { audio: 'Audio', video: 'Video' };

/** Retrieve answers a status while the job runs and the media (or its URL) once done. */
function retrieveRoute(kind: JobKind): Route {
  const tags = [TAGS[kind]];
  return {
    method: 'POST',
    path: `/${kind}/retrieve`,
    access: 'account',
    doc: {
      summary: `A queued ${kind} job: its status while it runs, its media when done`,
      tags,
      body: RetrieveJobInput,
      responseDescription:
        'Waiting or running: JSON {status: PROCESSING, average_execution_time, execution_duration} (ms). Done: ' +
        'the media bytes with their Content-Type (a Range header gives 206, or 416 past the end), or for models ' +
        'that deliver by URL JSON {status: "COMPLETED", download_url, average_execution_time, ' +
        'execution_duration} (video: the URL also as video_url). Failed: JSON {status: "FAILED", error, ' +
        'average_execution_time, execution_duration}. ' +
        "Unknown, another account's or deleted: 404 MEDIA_NOT_FOUND.",
    },
    async handler(call) {
      const { services, auth } = call;
      const body = await call.json();
      const retrieved = await services.jobs.service.retrieve(auth, kind, body, { origin: call.origin });
      if (retrieved.kind === 'status') {
        const status = retrieved.body;
        // veniceai-cli's `video status` and `video retrieve` read the finished clip's URL as video_url.
        const alias = kind === 'video' && 'download_url' in status ? { video_url: status.download_url } : {};
        return json({ ...status, ...alias });
      }
      const range = { method: 'GET', range: call.header('range'), ifRange: call.header('if-range') };
      return mediaReply(services.media.store, retrieved.media, range, call.requestId, {
        cacheControl: 'no-store',
        afterSent: retrieved.afterSent,
      });
    },
  };
}

function jobRoutes(kind: JobKind): Route[] {
  const tags = [TAGS[kind]];
  return [
    {
      method: 'POST',
      path: `/${kind}/quote`,
      access: 'account',
      ...VIDEO_BODY[kind],
      doc: {
        summary: `The price of a ${kind} job, without queueing or charging anything`,
        tags,
        body: BODIES[kind].quote,
        response: Quote,
      },
      async handler(call) {
        const { services, auth } = call;
        return json(await services.jobs.service.quote(auth, kind, await call.json()));
      },
    },
    {
      method: 'POST',
      path: `/${kind}/queue`,
      access: 'account',
      ...VIDEO_BODY[kind],
      doc: {
        summary: `Queue a ${kind} job; its quote is held now and charged when it completes (402 when not covered)`,
        tags,
        body: BODIES[kind].queue,
        response: QUEUED[kind],
      },
      async handler(call) {
        const { services, auth } = call;
        return json({
          ...(await services.jobs.service.queue(auth, kind, await call.json(), { origin: call.origin })),
        });
      },
    },
    retrieveRoute(kind),
    {
      method: 'POST',
      path: `/${kind}/complete`,
      access: 'account',
      doc: {
        summary: `Delete a ${kind} job's media once downloaded; the job answers 404 afterwards`,
        tags,
        body: CompleteJobInput,
        response: z.object({ success: z.literal(true) }),
      },
      async handler(call) {
        const { services, auth } = call;
        return json(await services.jobs.service.complete(auth, kind, await call.json()));
      },
    },
  ];
}

export const jobRoutesList: Route[] = [...jobRoutes('audio'), ...jobRoutes('video')];
