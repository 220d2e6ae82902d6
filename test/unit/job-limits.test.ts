import { describe, expect, it } from 'vitest';
import { modelFromConfig, type CatalogModel } from '../../src/catalog/model.ts';
import { ValidationError } from '../../src/errors.ts';
import {
  audioUsage,
  checkProbedInputs,
  maxFetchBytes,
  parseAudioJob,
  parseVideoJob,
  quoteVideo,
  videoUsage,
  type ProbedInput,
} from '../../src/media/jobs/job-rules.ts';
import { parseOperatorConfig } from '../../src/operator-config/load.ts';
import { ModelConfigSchema } from '../../src/operator-config/schema.ts';

const config = parseOperatorConfig({}, 'test');
const builtIn = (id: string): CatalogModel => ({
  ...modelFromConfig(config.models.find((model) => model.id === id)!),
  created: new Date(0),
});
const handMade = (raw: Record<string, unknown>): CatalogModel => ({
  ...modelFromConfig(ModelConfigSchema.parse({ id: 'hand-made', name: 'Hand made', provider: 'simulator', ...raw })),
  created: new Date(0),
});

function refusedField(action: () => unknown): string[] {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).issues.map((issue) => issue.path.join('.'));
  }
  throw new Error('expected a 400');
}

const MB = 1024 * 1024;
const input = (extra: Partial<ProbedInput> & Pick<ProbedInput, 'role'>): ProbedInput => ({
  field: `${extra.role}_url`,
  bytes: MB,
  contentType: 'image/png',
  ...extra,
});

describe('checkProbedInputs', () => {
  it('accepts media within the limits', () => {
    expect(() =>
      checkProbedInputs([
        input({ role: 'image' }),
        input({ role: 'audio', contentType: 'audio/mpeg', durationSeconds: 30 }),
        input({ role: 'video', contentType: 'video/webm', bytes: 120 * MB }),
        input({
          role: 'reference_video',
          field: 'reference_video_urls[0]',
          contentType: 'video/mp4',
          durationSeconds: 7,
        }),
        input({
          role: 'reference_video',
          field: 'reference_video_urls[1]',
          contentType: 'video/quicktime',
          durationSeconds: 8,
        }),
      ]),
    ).not.toThrow();
    expect(maxFetchBytes('reference_video')).toBe(50 * MB);
  });

  it('refuses type, size, length and total violations, naming the field', () => {
    expect(refusedField(() => checkProbedInputs([input({ role: 'image', contentType: 'text/html' })]))).toEqual([
      'image_url',
    ]);
    expect(
      refusedField(() =>
        checkProbedInputs([input({ role: 'audio', contentType: 'audio/wav', bytes: 16 * MB, durationSeconds: 3 })]),
      ),
    ).toEqual(['audio_url']);
    expect(
      refusedField(() =>
        checkProbedInputs([input({ role: 'audio', contentType: 'audio/wav; codecs=1', durationSeconds: 31 })]),
      ),
    ).toEqual(['audio_url']);
    expect(
      refusedField(() =>
        checkProbedInputs([
          input({
            role: 'reference_audio',
            field: 'reference_audio_urls[0]',
            contentType: 'audio/mpeg',
            durationSeconds: 1.5,
          }),
        ]),
      ),
    ).toEqual(['reference_audio_urls[0]']);
    expect(
      refusedField(() =>
        checkProbedInputs([
          input({
            role: 'reference_video',
            field: 'reference_video_urls[0]',
            contentType: 'video/webm',
            durationSeconds: 5,
          }),
        ]),
      ),
    ).toEqual(['reference_video_urls[0]']);
    expect(
      refusedField(() =>
        checkProbedInputs([
          input({
            role: 'reference_audio',
            field: 'reference_audio_urls[0]',
            contentType: 'audio/mpeg',
            durationSeconds: 10,
          }),
          input({
            role: 'reference_audio',
            field: 'reference_audio_urls[1]',
            contentType: 'audio/mpeg',
            durationSeconds: 6,
          }),
        ]),
      ),
    ).toEqual(['reference_audio_urls']);
    expect(
      refusedField(() => checkProbedInputs([input({ role: 'reference_video', contentType: 'video/mp4' })])),
    ).toEqual(['reference_video_url']);
  });
});

describe('job usage entries', () => {
  it('records a music job with its quoted cost', () => {
    const music = builtIn('lagoon-sim-music');
    const request = parseAudioJob(music, { model: music.id, prompt: 'x', duration_seconds: 45 });
    const usage = audioUsage(music, request, { requestId: 'r1', executionTimeMs: 1_200, notes: 'Music' });
    expect(usage).toMatchObject({ modelId: music.id, modelType: 'MUSIC', unitType: 'requests' });
    expect(usage.lines).toEqual([
      {
        sku: 'lagoon-sim-music-music-track',
        lineType: 'Generation',
        units: '1',
        pricePerUnitUsd: '0.03',
        cost: { usd: 30_000_000n, diem: 30_000_000n },
      },
    ]);
    const perChar = handMade({ type: 'music', pricing: { per_thousand_characters: { usd: 0.01 } } });
    const chars = audioUsage(perChar, parseAudioJob(perChar, { model: 'x', prompt: 'abcd' }), {
      requestId: 'r2',
      executionTimeMs: 1,
      notes: '',
    });
    expect(chars.lines[0]).toMatchObject({ units: '4', pricePerUnitUsd: '0.00001', cost: { usd: 40_000n } });
  });

  it('records a video job per second with the multipliers folded into the unit price', () => {
    const video = builtIn('lagoon-sim-video');
    const { request } = parseVideoJob(video, { model: video.id, prompt: 'p', duration: '10s', resolution: '720p' });
    const usage = videoUsage(video, request, { requestId: 'r3', executionTimeMs: 9, notes: 'Video' });
    expect(usage).toMatchObject({ modelType: 'VIDEO', unitType: 'seconds' });
    expect(usage.lines).toEqual([
      {
        sku: 'lagoon-sim-video-video-720p-audio',
        lineType: 'Generation',
        units: '10',
        pricePerUnitUsd: '0.09',
        cost: quoteVideo(video, request),
      },
    ]);
    expect(usage.lines[0]!.cost.usd).toBe(900_000_000n);
  });
});

describe('the built-in upscaler', () => {
  it('needs video_url, takes upscale_factor and prices by it', () => {
    const upscaler = builtIn('lagoon-sim-video-upscaler');
    const body = { model: upscaler.id, prompt: 'sharper', duration: '10s', video_url: 'https://example.com/v.mp4' };
    expect(refusedField(() => parseVideoJob(upscaler, { ...body, video_url: undefined }))).toEqual(['video_url']);
    expect(refusedField(() => parseVideoJob(upscaler, { ...body, resolution: '720p' }))).toEqual(['resolution']);
    const { request, remote } = parseVideoJob(upscaler, { ...body, upscale_factor: 4, audio: false });
    expect(request).toMatchObject({ upscaleFactor: 4, resolution: '4x', durationSeconds: 10, audio: false });
    expect(remote).toEqual([{ role: 'video', url: body.video_url, field: 'video_url' }]);
    expect(quoteVideo(upscaler, request).usd).toBe(200_000_000n);
  });
});
