import type { Price } from '../../billing/billing.types.ts';
import type { CatalogModel } from '../../catalog/model.ts';
import type { AudioJobRequest, JobInput } from '../../providers/jobs/job-engine.ts';
import { checkAudioJob, checkAudioQuote, type AudioQuote } from './audio-rules.ts';
import { quoteAudio, quoteVideo } from './job-pricing.ts';
import {
  checkVideoJob,
  checkVideoQuote,
  withInputDuration,
  type ParsedVideoJob,
  type ParsedVideoShape,
  type RemoteInput,
} from './video-rules.ts';

/*
 * The entry points of the queued-job rules: a body in, a normalised request (or quote basis) out, or a
 * ValidationError (400) naming the field. Each parse also prices the result, so a request the model's price
 * cannot cover (a music length no duration tier holds) is refused here, before anything is reserved.
 */

export { audioDurationRule, fieldError, musicSpec, type AudioQuote } from './audio-rules.ts';
export { audioUsage, musicTier, quoteAudio, quoteVideo, videoUsage, type JobUsageDetails } from './job-pricing.ts';
export { checkProbedInputs, INPUT_LIMITS, maxFetchBytes, type ProbedInput } from './input-limits.ts';
export {
  videoRules,
  withInputDuration,
  type ParsedVideoJob,
  type ParsedVideoShape,
  type RemoteInput,
} from './video-rules.ts';

/** POST /audio/queue. */
export function parseAudioJob(model: CatalogModel, input: unknown): AudioJobRequest {
  const request = checkAudioJob(model, input);
  quoteAudio(model, request);
  return request;
}

/**
 * POST /video/queue: the request (without its inputs) and the remote media to fetch under the fetch policy. An
 * upscale without a duration is priced once its video is fetched (withInputDuration).
 */
export function parseVideoJob(model: CatalogModel, input: unknown): ParsedVideoJob {
  const parsed = checkVideoJob(model, input);
  if (!parsed.durationFromInput) quoteVideo(model, parsed.request);
  return parsed;
}

/** POST /audio/quote: the basis and its price. */
export function parseAudioQuote(model: CatalogModel, input: unknown): { basis: AudioQuote; price: Price } {
  const basis = checkAudioQuote(model, input);
  return { basis, price: quoteAudio(model, basis) };
}

/**
 * POST /video/quote: the basis and its price. An upscale quoted by its video_url instead of a duration is priced by
 * the video's length: `inputs` holds that video, fetched (videoQuoteInput names it).
 */
export function parseVideoQuote(
  model: CatalogModel,
  input: unknown,
  inputs: readonly JobInput[] = [],
): { basis: ParsedVideoShape; price: Price } {
  const { basis, video } = checkVideoQuote(model, input);
  const priced = video ? withInputDuration(model, basis, inputs) : basis;
  return { basis: priced, price: quoteVideo(model, priced) };
}

/** The video a quote must fetch before it can be priced (an upscale without a duration), if any. */
export function videoQuoteInput(model: CatalogModel, input: unknown): RemoteInput | undefined {
  return checkVideoQuote(model, input).video;
}
