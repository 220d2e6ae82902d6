import type { JobInput, JobInputRole, JobRequest } from './job-engine.ts';

/** The value at a dot path (`video.url`, `output.0`) of a JSON answer; undefined when any step is missing. */
export function pickField(value: unknown, path: string): unknown {
  let current = value;
  for (const step of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[step];
  }
  return current;
}

/**
 * What a queue API is sent for a job: the validated request in the snake_case names fal.ai and Replicate models
 * commonly take, and a video job's fetched media as data URLs under the request's own field names (fal.ai and
 * Replicate accept data URLs wherever they take a media URL). The engine never fetches the caller's URLs itself:
 * they were read once, under the public-address policy, when the job was queued.
 */
export function upstreamBody(request: JobRequest): Record<string, unknown> {
  const fields: Record<string, unknown> =
    request.kind === 'video'
      ? {
          // The upscale model may have no prompt: none is sent then.
          prompt: request.prompt === '' ? undefined : request.prompt,
          negative_prompt: request.negativePrompt,
          duration: request.durationSeconds,
          width: request.width,
          height: request.height,
          aspect_ratio: request.aspectRatio,
          resolution: request.resolution,
          generate_audio: request.audio,
          upscale_factor: request.upscaleFactor,
          ...mediaFields(request.inputs),
        }
      : {
          prompt: request.prompt,
          lyrics: request.lyrics,
          duration: request.durationSeconds,
          instrumental: request.forceInstrumental,
          voice: request.voice,
          language_code: request.languageCode,
          speed: request.speed,
          format: request.format,
        };
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

const SINGLE: Partial<Record<JobInputRole, string>> = {
  image: 'image_url',
  end_image: 'end_image_url',
  audio: 'audio_url',
  video: 'video_url',
};
const LISTS: Partial<Record<JobInputRole, string>> = {
  reference_image: 'reference_image_urls',
  reference_video: 'reference_video_urls',
  reference_audio: 'reference_audio_urls',
  scene_image: 'scene_image_urls',
};

const dataUrl = (input: JobInput) => `data:${input.contentType};base64,${input.bytes.toString('base64')}`;

/** A video job's fetched media, in the order they were given, as the request named them. */
function mediaFields(inputs: readonly JobInput[]): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const elements: { frontal_image_url?: string; reference_image_urls: string[] }[] = [];
  for (const input of inputs) {
    const single = SINGLE[input.role];
    const list = LISTS[input.role];
    if (single) fields[single] = dataUrl(input);
    else if (list) fields[list] = [...((fields[list] as string[] | undefined) ?? []), dataUrl(input)];
    else {
      const element = (elements[(input.element ?? 1) - 1] ??= { reference_image_urls: [] });
      if (input.role === 'element_frontal_image') element.frontal_image_url = dataUrl(input);
      else element.reference_image_urls.push(dataUrl(input));
    }
  }
  if (elements.length > 0) fields.elements = Array.from(elements, (element) => element ?? { reference_image_urls: [] });
  return fields;
}
