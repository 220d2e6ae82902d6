import type { JobInputRole } from '../../providers/jobs/job-engine.ts';
import { fieldError } from './audio-rules.ts';

/*
 * Limits on a video job's remote media once fetched and probed (docs/api.md, Queued jobs): the type, the size (also
 * the cap of the fetch itself, maxFetchBytes) and, for sound and video, the length. audio_url: WAV or MP3, at most
 * 30 s and 15 MB; video_url: MP4, MOV or WebM; reference videos: MP4 or MOV, 2 to 15 s and 50 MB each; reference
 * audio: WAV or MP3, 2 to 15 s each; references of one kind at most 15 s together. Images and video_url have no
 * published size limit: Lagoon caps them at 20 MB and 200 MB.
 */

const MB = 1024 * 1024;
const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'image/gif'];
const AUDIO_TYPES = ['audio/wav', 'audio/x-wav', 'audio/wave', 'audio/vnd.wave', 'audio/mpeg', 'audio/mp3'];
const VIDEO_TYPES = ['video/mp4', 'video/quicktime', 'video/webm'];
const REFERENCE_VIDEO_TYPES = ['video/mp4', 'video/quicktime'];

interface Limit {
  readonly maxBytes: number;
  readonly types: readonly string[];
  readonly describe: string;
  readonly minSeconds?: number;
  readonly maxSeconds?: number;
}

const image: Limit = { maxBytes: 20 * MB, types: IMAGE_TYPES, describe: 'a JPEG, PNG, WebP or GIF image' };

export const INPUT_LIMITS: Readonly<Record<JobInputRole, Limit>> = {
  image,
  end_image: image,
  reference_image: image,
  element_frontal_image: image,
  element_reference_image: image,
  scene_image: image,
  audio: { maxBytes: 15 * MB, types: AUDIO_TYPES, describe: 'WAV or MP3 audio', maxSeconds: 30 },
  video: { maxBytes: 200 * MB, types: VIDEO_TYPES, describe: 'an MP4, MOV or WebM video' },
  reference_video: {
    maxBytes: 50 * MB,
    types: REFERENCE_VIDEO_TYPES,
    describe: 'an MP4 or MOV video',
    minSeconds: 2,
    maxSeconds: 15,
  },
  reference_audio: {
    maxBytes: 15 * MB,
    types: AUDIO_TYPES,
    describe: 'WAV or MP3 audio',
    minSeconds: 2,
    maxSeconds: 15,
  },
};

/** References of one kind together (seconds). */
export const REFERENCE_TOTAL_SECONDS = 15;

/** The most bytes worth fetching for an input of this role (a larger body is refused while it downloads). */
export const maxFetchBytes = (role: JobInputRole): number => INPUT_LIMITS[role].maxBytes;

export interface ProbedInput {
  readonly role: JobInputRole;
  /** The body field it came from (RemoteInput.field), named by the 400. */
  readonly field: string;
  readonly bytes: number;
  /** The sniffed or probed MIME type (not the server's claim alone). */
  readonly contentType: string;
  /** Probed length, for sound and video. */
  readonly durationSeconds?: number | undefined;
}

/** Every fetched input against its role's limits; the first violation is a 400 naming its field. */
export function checkProbedInputs(inputs: readonly ProbedInput[]): void {
  const totals = new Map<JobInputRole, number>();
  for (const input of inputs) {
    const limit = INPUT_LIMITS[input.role];
    const type = input.contentType.split(';')[0]?.trim().toLowerCase() ?? '';
    if (!limit.types.includes(type))
      throw fieldError(input.field, `must be ${limit.describe} (got ${type || 'unknown'})`);
    if (input.bytes > limit.maxBytes)
      throw fieldError(
        input.field,
        `must be at most ${limit.maxBytes / MB} MB (got ${(input.bytes / MB).toFixed(1)} MB)`,
      );
    if (limit.minSeconds === undefined && limit.maxSeconds === undefined) continue;
    const seconds = input.durationSeconds;
    if (seconds === undefined || !Number.isFinite(seconds))
      throw fieldError(input.field, 'its length could not be read');
    if (limit.minSeconds !== undefined && seconds < limit.minSeconds)
      throw fieldError(input.field, `must be at least ${limit.minSeconds} s long (got ${seconds.toFixed(1)} s)`);
    if (limit.maxSeconds !== undefined && seconds > limit.maxSeconds)
      throw fieldError(input.field, `must be at most ${limit.maxSeconds} s long (got ${seconds.toFixed(1)} s)`);
    if (input.role === 'reference_video' || input.role === 'reference_audio') {
      const total = (totals.get(input.role) ?? 0) + seconds;
      totals.set(input.role, total);
      if (total > REFERENCE_TOTAL_SECONDS)
        throw fieldError(
          `${input.role}_urls`,
          `together at most ${REFERENCE_TOTAL_SECONDS} s (got ${total.toFixed(1)} s)`,
        );
    }
  }
}
