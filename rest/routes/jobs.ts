import { z } from 'zod';
import { AudioJobInput, AudioQuoteInput, VideoJobInput, VideoQuoteInput } from '../../src/media/jobs/job-inputs.ts';
import { CompleteJobInput, RetrieveJobInput } from '../../src/media/jobs/job.inputs.ts';
import type { JobKind } from '../../src/providers/jobs/job-engine.ts';
import { json, text } from '../http.ts';
import type { Route } from '../router.ts';

/* Queued music/audio and video jobs: quote, queue, poll (retrieve) and complete, per kind. */

const BODIES = {
  audio: { queue: AudioJobInput, quote: AudioQuoteInput },
  video: { queue: VideoJobInput, quote: VideoQuoteInput },
} as const;
const Quote = z.object({ quote: z.number().describe('USD the job would be charged') });
const Queued = z.object({
  model: z.string(),
  queue_id: z.string().describe('Poll /retrieve with it'),
  status: z.literal('QUEUED'),
});

const TAGS: Record<JobKind, string> = { audio: 'Audio', video: 'Video' };

function jobRoutes(kind: JobKind): Route[] {
  const tags = [TAGS[kind]];
  return [
    {
      method: 'POST',
      path: `/${kind}/quote`,
      access: 'account',
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
      doc: {
        summary: `Queue a ${kind} job; its quote is held now and charged when it completes (402 when not covered)`,
        tags,
        body: BODIES[kind].queue,
        response: Queued,
      },
      async handler(call) {
        const { services, auth } = call;
        return json({ ...(await services.jobs.service.queue(auth, kind, await call.json())) });
      },
    },
    {
      method: 'POST',
      path: `/${kind}/retrieve`,
      access: 'account',
      doc: {
        summary: `A queued ${kind} job: its status while it runs, its media when done`,
        tags,
        body: RetrieveJobInput,
        responseDescription:
          'Running: JSON {status: QUEUED|PROCESSING, average_execution_time, execution_duration} (ms). Done: the ' +
          'media bytes with their Content-Type. Failed: JSON {status: "FAILED", error}. Unknown, another ' +
          "account's or deleted: 404 MEDIA_NOT_FOUND.",
      },
      async handler(call) {
        const { services, auth } = call;
        const retrieved = await services.jobs.service.retrieve(auth, kind, await call.json());
        if (retrieved.kind === 'status') return json({ ...retrieved.body });
        return text(retrieved.bytes, { 'content-type': retrieved.contentType, 'cache-control': 'no-store' });
      },
    },
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
