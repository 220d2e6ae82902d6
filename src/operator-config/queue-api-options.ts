import { z } from 'zod';

/*
 * The `options` of a `type: queue` provider (src/providers/jobs/queue-api.engine.ts, docs/job-engines.md): where a
 * fal.ai/Replicate-style queue API takes a job, reports its status and hands over the result. Checked when the
 * operator config loads, so a typo is a config error naming the field, not a failure at the first job.
 */

const DottedField = z.string().min(1);

export const QueueApiOptionsSchema = z.strictObject({
  /** POST target; `{model}` is the model's upstream name. */
  submitPath: z.string().startsWith('/').default('/{model}'),
  /** GET target while running; `{id}` is the upstream job id. */
  statusPath: z.string().startsWith('/').default('/{model}/requests/{id}/status'),
  /** GET target once done: JSON naming the media URL, or the media bytes themselves. */
  resultPath: z.string().startsWith('/').default('/{model}/requests/{id}'),
  /** Where the submit answer keeps the job id (dot path, e.g. `id` or `data.request_id`). */
  idField: DottedField.default('request_id'),
  statusField: DottedField.default('status'),
  completedStatuses: z.array(z.string()).min(1).default(['COMPLETED', 'succeeded']),
  failedStatuses: z.array(z.string()).default(['FAILED', 'failed', 'canceled', 'ERROR']),
  /** A 0–100 number in the status answer, when the upstream reports progress. */
  progressField: DottedField.optional(),
  /** The media URL in the result JSON (a string, or an array whose first item is one). */
  mediaUrlField: DottedField.default('video.url'),
  /** The upstream's error in a failed status answer (logged, never shown to callers). */
  errorField: DottedField.default('error'),
  /** The job's fields go under this key (Replicate: `input`); unset, they are the whole body (fal). */
  inputField: z.string().min(1).optional(),
  /** The Authorization scheme for `apiKey` (fal: `Key`, Replicate: `Bearer`). */
  authScheme: z.string().min(1).default('Bearer'),
  pollIntervalMs: z.number().int().min(10).max(60_000).default(1_000),
  /** Further tries of one HTTP call after an upstream fault, waiting `retryBaseMs` × 2^n (with jitter) between. */
  retries: z.number().int().min(0).max(10).default(3),
  retryBaseMs: z.number().int().min(1).max(60_000).default(500),
  maxResultBytes: z
    .number()
    .int()
    .positive()
    .default(512 * 1024 * 1024),
});
export type QueueApiOptions = z.output<typeof QueueApiOptionsSchema>;
