import type { JobRequest } from './job-engine.ts';

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
 * commonly take. Fetched reference media are not forwarded (this adapter serves text-to-video and music models).
 */
export function upstreamBody(request: JobRequest): Record<string, unknown> {
  const fields: Record<string, unknown> =
    request.kind === 'video'
      ? {
          prompt: request.prompt,
          negative_prompt: request.negativePrompt,
          duration: request.durationSeconds,
          width: request.width,
          height: request.height,
          aspect_ratio: request.aspectRatio,
          resolution: request.resolution,
          generate_audio: request.audio,
          upscale_factor: request.upscaleFactor,
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
