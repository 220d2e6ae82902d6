import { describe, expect, it } from 'vitest';
import { modelFromConfig, type CatalogModel } from '../../src/catalog/model.ts';
import { ValidationError } from '../../src/errors.ts';
import {
  parseAudioJob,
  parseAudioQuote,
  parseVideoJob,
  parseVideoQuote,
  quoteAudio,
  quoteVideo,
  withInputDuration,
} from '../../src/media/jobs/job-rules.ts';
import { parseOperatorConfig } from '../../src/operator-config/load.ts';
import { ModelConfigSchema } from '../../src/operator-config/schema.ts';

const config = parseOperatorConfig({}, 'test');
const catalogModel = (draft: ReturnType<typeof modelFromConfig>): CatalogModel => ({ ...draft, created: new Date(0) });
const builtIn = (id: string): CatalogModel => {
  const found = config.models.find((model) => model.id === id);
  if (!found) throw new Error(`no ${id} in the default catalog`);
  return catalogModel(modelFromConfig(found));
};
const handMade = (raw: Record<string, unknown>): CatalogModel =>
  catalogModel(
    modelFromConfig(ModelConfigSchema.parse({ id: 'hand-made', name: 'Hand made', provider: 'simulator', ...raw })),
  );

/** Runs `action`, expects a 400 whose issues name `field`; returns the message. */
function refused(action: () => unknown, field: string): string {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    const issues = (error as ValidationError).issues.map((issue) => issue.path.join('.'));
    expect(issues).toContain(field);
    return (error as ValidationError).message;
  }
  throw new Error(`expected a 400 naming ${field}`);
}

const music = builtIn('lagoon-sim-music');
const video = builtIn('lagoon-sim-video');
const nano = (usd: string) => BigInt(Math.round(Number(usd) * 1e9));

const richMusic = handMade({
  type: 'music',
  pricing: { per_thousand_characters: { usd: 0.01, diem: 0.02 } },
  spec: {
    lyrics_required: true,
    supports_lyrics: true,
    supports_lyrics_optimizer: true,
    supports_language_code: true,
    supports_speed: true,
    default_speed: 1,
    min_speed: 0.5,
    max_speed: 2,
    voices: ['alto', 'tenor'],
    default_voice: 'alto',
    duration_options: [10, 20],
    min_prompt_length: 5,
    prompt_character_limit: 50,
    lyrics_character_limit: 20,
    supported_formats: ['flac', 'wav'],
    default_format: 'flac',
  },
});

describe('parseAudioJob', () => {
  it('normalises a request for the simulator music model with its defaults', () => {
    expect(parseAudioJob(music, { model: music.id, prompt: 'sea shanty' })).toEqual({
      kind: 'audio',
      prompt: 'sea shanty',
      durationSeconds: 30,
      forceInstrumental: false,
      format: 'mp3',
    });
    const full = parseAudioJob(music, {
      model: music.id,
      prompt: 'sea shanty',
      lyrics_prompt: 'heave ho',
      duration_seconds: '45',
    });
    expect(full).toMatchObject({ lyrics: 'heave ho', durationSeconds: 45 });
  });

  it('refuses each broken shared bound, naming the field', () => {
    refused(() => parseAudioJob(music, { model: music.id }), 'prompt');
    refused(() => parseAudioJob(music, { model: music.id, prompt: '   ' }), 'prompt');
    refused(() => parseAudioJob(music, { model: music.id, prompt: 'x', duration_seconds: 0 }), 'duration_seconds');
    refused(() => parseAudioJob(music, { model: music.id, prompt: 'x', duration_seconds: '12.5' }), 'duration_seconds');
    refused(() => parseAudioJob(music, { model: music.id, prompt: 'x', duration_seconds: 'ten' }), 'duration_seconds');
    refused(() => parseAudioJob(music, { model: music.id, prompt: 'x', speed: 9 }), 'speed');
    refused(
      () => parseAudioJob(music, { model: music.id, prompt: 'x', force_instrumental: 'yes' }),
      'force_instrumental',
    );
    refused(() => parseAudioJob(music, { model: music.id, prompt: 'x', language_code: 'english' }), 'language_code');
    refused(() => parseAudioJob(video, { model: video.id, prompt: 'x' }), 'model');
  });

  it('applies the simulator model rules', () => {
    const ask = (extra: Record<string, unknown>) => () =>
      parseAudioJob(music, { model: music.id, prompt: 'x', ...extra });
    expect(refused(ask({ duration_seconds: 3 }), 'duration_seconds')).toMatch(/5 to 120/);
    refused(ask({ duration_seconds: 121 }), 'duration_seconds');
    refused(ask({ prompt: 'p'.repeat(1_001) }), 'prompt');
    refused(ask({ lyrics_prompt: 'l'.repeat(3_001) }), 'lyrics_prompt');
    refused(ask({ lyrics_optimizer: true }), 'lyrics_optimizer');
    refused(ask({ language_code: 'en' }), 'language_code');
    refused(ask({ speed: 1.5 }), 'speed');
    refused(ask({ voice: 'alto' }), 'voice');
    refused(ask({ force_instrumental: true, lyrics_prompt: 'la la' }), 'lyrics_prompt');
    expect(parseAudioJob(music, { model: music.id, prompt: 'x', force_instrumental: true })).toMatchObject({
      forceInstrumental: true,
    });
  });

  it('applies every rule of a richer hand-made model', () => {
    const base = { model: 'hand-made', prompt: 'a long prompt', lyrics_prompt: 'la la la' };
    const ask = (extra: Record<string, unknown>) => () => parseAudioJob(richMusic, { ...base, ...extra });
    expect(parseAudioJob(richMusic, base)).toEqual({
      kind: 'audio',
      prompt: 'a long prompt',
      lyrics: 'la la la',
      durationSeconds: 10,
      forceInstrumental: false,
      voice: 'alto',
      speed: 1,
      format: 'flac',
    });
    expect(
      parseAudioJob(richMusic, { ...base, duration_seconds: 20, voice: 'tenor', speed: 2, language_code: 'FR' }),
    ).toMatchObject({ durationSeconds: 20, voice: 'tenor', speed: 2, languageCode: 'fr' });
    // Only the listed lengths (no min/max): 15 is between them but not one of them.
    expect(refused(ask({ duration_seconds: 15 }), 'duration_seconds')).toMatch(/one of: 10, 20/);
    refused(ask({ prompt: 'tiny' }), 'prompt');
    refused(ask({ prompt: 'p'.repeat(51) }), 'prompt');
    refused(ask({ lyrics_prompt: undefined }), 'lyrics_prompt');
    refused(ask({ lyrics_prompt: '' }), 'lyrics_prompt');
    refused(ask({ lyrics_prompt: 'l'.repeat(21) }), 'lyrics_prompt');
    refused(ask({ lyrics_optimizer: true }), 'lyrics_prompt');
    refused(ask({ force_instrumental: true }), 'force_instrumental');
    refused(ask({ voice: 'bass' }), 'voice');
    refused(ask({ speed: 0.4 }), 'speed');
    refused(ask({ speed: 2.5 }), 'speed');
    // The optimizer writes the lyrics: a required lyrics_prompt may then be left empty.
    expect(parseAudioJob(richMusic, { ...base, lyrics_prompt: '', lyrics_optimizer: true })).not.toHaveProperty(
      'lyrics',
    );
  });

  it('refuses lyrics and durations a model does not take', () => {
    const plain = handMade({ type: 'music', pricing: { generation: { usd: 0.07 } }, spec: { supports_lyrics: false } });
    refused(() => parseAudioJob(plain, { model: 'hand-made', prompt: 'x', lyrics_prompt: 'words' }), 'lyrics_prompt');
    refused(() => parseAudioJob(plain, { model: 'hand-made', prompt: 'x', duration_seconds: 30 }), 'duration_seconds');
    expect(parseAudioJob(plain, { model: 'hand-made', prompt: 'x' }).durationSeconds).toBe(30);
  });
});

describe('audio prices', () => {
  it('prices the simulator music model by duration tier', () => {
    const price = (seconds?: number) =>
      quoteAudio(music, parseAudioJob(music, { model: music.id, prompt: 'x', duration_seconds: seconds }));
    expect(price()).toEqual({ usd: 20_000_000n, diem: 20_000_000n });
    expect(price(5).usd).toBe(20_000_000n);
    expect(price(30).usd).toBe(20_000_000n);
    expect(price(31).usd).toBe(30_000_000n);
    expect(price(120).usd).toBe(50_000_000n);
    expect(parseAudioQuote(music, { model: music.id, duration_seconds: 61 }).price.usd).toBe(50_000_000n);
    expect(parseAudioQuote(music, { model: music.id }).price.usd).toBe(20_000_000n);
  });

  it('refuses a length no tier holds, before anything is reserved', () => {
    const gap = handMade({
      type: 'music',
      pricing: { durations: { '10': { usd: 0.01, min_seconds: 1, max_seconds: 10 } } },
      spec: { min_duration: 1, max_duration: 60 },
    });
    refused(() => parseAudioJob(gap, { model: 'hand-made', prompt: 'x', duration_seconds: 20 }), 'duration_seconds');
    refused(() => parseAudioQuote(gap, { model: 'hand-made', duration_seconds: 20 }), 'duration_seconds');
  });

  it('prices generation, per second and per thousand characters exactly', () => {
    const flat = handMade({ type: 'music', pricing: { generation: { usd: 0.07, diem: 0.05 } } });
    expect(parseAudioQuote(flat, { model: 'x' }).price).toEqual({ usd: 70_000_000n, diem: 50_000_000n });
    const perSecond = handMade({
      type: 'music',
      pricing: { per_second: { usd: 0.001 } },
      spec: { min_duration: 1, max_duration: 300, default_duration: 60 },
    });
    expect(parseAudioQuote(perSecond, { model: 'x', duration_seconds: '45' }).price.usd).toBe(45_000_000n);
    expect(parseAudioQuote(perSecond, { model: 'x' }).price.usd).toBe(60_000_000n);
    // 'abcde' (5) + 'héllo wörld' (11 code points) = 16 characters at 0.01 / 1,000.
    const job = parseAudioJob(richMusic, { model: 'x', prompt: 'abcde', lyrics_prompt: 'héllo wörld' });
    expect(quoteAudio(richMusic, job)).toEqual({ usd: 160_000n, diem: 320_000n });
    expect(parseAudioQuote(richMusic, { model: 'x', character_count: 1_500 }).price.usd).toBe(15_000_000n);
    refused(() => parseAudioQuote(richMusic, { model: 'x', character_count: -1 }), 'character_count');
    // A fraction of a nano-unit is rounded up.
    const tiny = handMade({ type: 'music', pricing: { per_thousand_characters: { usd: 0.0000001 } } });
    expect(parseAudioQuote(tiny, { model: 'x', character_count: 1 }).price.usd).toBe(1n);
  });
});

const upscaler = handMade({
  type: 'video',
  constraints: { model_type: 'video', durations: ['5s', '10s'], audio: false, audio_configurable: false },
  pricing: { per_second: { usd: 0.01 }, resolution_multipliers: { '2x': 1, '4x': 3 } },
});
const videoBase = { model: video.id, prompt: 'a lighthouse at dusk', duration: '5s' };

describe('parseVideoJob', () => {
  it('normalises a request with the model defaults and sizes it', () => {
    expect(parseVideoJob(video, videoBase)).toEqual({
      request: {
        kind: 'video',
        prompt: 'a lighthouse at dusk',
        duration: '5s',
        durationSeconds: 5,
        aspectRatio: '16:9',
        resolution: '480p',
        audio: true,
        width: 854,
        height: 480,
      },
      remote: [],
      durationFromInput: false,
    });
    const tall = parseVideoJob(video, { ...videoBase, aspect_ratio: '9:16', resolution: '720p', audio: false });
    expect(tall.request).toMatchObject({ width: 720, height: 1280, audio: false, durationSeconds: 5 });
    expect(parseVideoJob(video, { ...videoBase, aspect_ratio: '1:1', duration: '10s' }).request).toMatchObject({
      width: 480,
      height: 480,
      durationSeconds: 10,
    });
  });

  it('refuses each broken rule, naming the field', () => {
    const ask = (extra: Record<string, unknown>) => () => parseVideoJob(video, { ...videoBase, ...extra });
    refused(ask({ prompt: '' }), 'prompt');
    refused(ask({ prompt: 'p'.repeat(10_001) }), 'prompt');
    expect(refused(ask({ prompt: 'p'.repeat(2_501) }), 'prompt')).toMatch(/2500/);
    refused(ask({ duration: undefined }), 'duration');
    refused(ask({ duration: '7 seconds' }), 'duration');
    expect(refused(ask({ duration: '8s' }), 'duration')).toMatch(/5s, 10s/);
    refused(ask({ resolution: '1080p' }), 'resolution');
    refused(ask({ resolution: '999p' }), 'resolution');
    refused(ask({ aspect_ratio: '4:3' }), 'aspect_ratio');
    refused(ask({ upscale_factor: 2 }), 'upscale_factor');
    refused(ask({ negative_prompt: 'n'.repeat(10_001) }), 'negative_prompt');
    refused(ask({ image_url: 'ftp://example.com/a.png' }), 'image_url');
    refused(ask({ reference_image_urls: Array(10).fill('https://example.com/a.png') }), 'reference_image_urls');
    refused(ask({ reference_video_urls: Array(4).fill('https://example.com/a.mp4') }), 'reference_video_urls');
    refused(ask({ reference_audio_urls: Array(4).fill('https://example.com/a.mp3') }), 'reference_audio_urls');
    refused(ask({ scene_image_urls: Array(5).fill('https://example.com/a.png') }), 'scene_image_urls');
    refused(ask({ elements: Array(5).fill({ frontal_image_url: 'https://example.com/a.png' }) }), 'elements');
    refused(ask({ reference_audio_urls: ['https://example.com/a.mp3'] }), 'reference_audio_urls');
    refused(ask({ prompt: 'with @Element1', elements: [] }), 'elements');
    refused(
      ask({ prompt: '@Element2 waves', elements: [{ frontal_image_url: 'https://example.com/a.png' }] }),
      'prompt',
    );
    refused(ask({ prompt: 'in @Image1' }), 'scene_image_urls');
    refused(() => parseVideoJob(music, { ...videoBase, model: music.id }), 'model');
  });

  it('lists remote media with their roles, fields and elements', () => {
    const { remote } = parseVideoJob(video, {
      ...videoBase,
      prompt: '@Element1 walks into @Image2',
      image_url: 'data:image/png;base64,AAAA',
      reference_video_urls: ['https://example.com/r.mp4'],
      reference_audio_urls: ['https://example.com/r.mp3'],
      elements: [
        { frontal_image_url: 'https://example.com/f.png', reference_image_urls: ['https://example.com/g.png'] },
      ],
      scene_image_urls: ['https://example.com/s1.png', 'https://example.com/s2.png'],
    });
    expect(remote.map(({ role, field, element }) => [role, field, element])).toEqual([
      ['image', 'image_url', undefined],
      ['reference_video', 'reference_video_urls[0]', undefined],
      ['reference_audio', 'reference_audio_urls[0]', undefined],
      ['element_frontal_image', 'elements[0].frontal_image_url', 1],
      ['element_reference_image', 'elements[0].reference_image_urls[0]', 1],
      ['scene_image', 'scene_image_urls[0]', undefined],
      ['scene_image', 'scene_image_urls[1]', undefined],
    ]);
  });

  it('applies the audio and model_type rules', () => {
    const silent = handMade({
      type: 'video',
      constraints: { model_type: 'image-to-video', resolutions: ['1080p'], audio: false, audio_configurable: false },
      pricing: { generation: { usd: 0.3 } },
    });
    const ask = (extra: Record<string, unknown>) => () =>
      parseVideoJob(silent, {
        model: 'x',
        prompt: 'p',
        duration: 'Auto',
        image_url: 'https://example.com/a.png',
        ...extra,
      });
    expect(ask({})()).toMatchObject({ request: { audio: false, width: 1920, height: 1080, duration: 'Auto' } });
    refused(ask({ audio: true }), 'audio');
    expect(ask({ audio: false })().request.audio).toBe(false);
    refused(ask({ image_url: undefined }), 'image_url');
    refused(ask({ aspect_ratio: '16:9' }), 'aspect_ratio');
  });

  it('takes upscale_factor and video_url only for the upscale model', () => {
    const ask = (extra: Record<string, unknown>) => () =>
      parseVideoJob(upscaler, {
        model: 'x',
        prompt: 'sharper',
        duration: '5s',
        video_url: 'https://example.com/v.mp4',
        ...extra,
      });
    expect(ask({})().request).toMatchObject({
      upscaleFactor: 2,
      resolution: '2x',
      width: 1280,
      height: 720,
      audio: false,
    });
    expect(ask({ upscale_factor: 4 })().request).toMatchObject({ upscaleFactor: 4, width: 2560, height: 1440 });
    expect(ask({})().remote).toEqual([{ role: 'video', url: 'https://example.com/v.mp4', field: 'video_url' }]);
    refused(ask({ video_url: undefined }), 'video_url');
    refused(ask({ upscale_factor: 3 }), 'upscale_factor');
    refused(ask({ resolution: '720p' }), 'resolution');
  });

  it('lets the upscale model leave out prompt and duration: the video gives the length and the price', () => {
    const bare = { model: 'x', video_url: 'https://example.com/v.mp4' };
    const parsed = parseVideoJob(upscaler, bare);
    expect(parsed.durationFromInput).toBe(true);
    expect(parsed.request).toMatchObject({ prompt: '', durationSeconds: 0, upscaleFactor: 2 });
    const video = (seconds: number | undefined) => [
      { role: 'video' as const, bytes: Buffer.alloc(0), contentType: 'video/mp4', durationSeconds: seconds },
    ];
    // 3.2 s is billed as 4 whole seconds: 0.01 USD/s × 4 × 1 (2x).
    const timed = withInputDuration(upscaler, parsed.request, video(3.2));
    expect(timed.durationSeconds).toBe(4);
    expect(quoteVideo(upscaler, timed).usd).toBe(40_000_000n);
    // Longer than the longest listed duration (10s), or of unknown length: 400 naming the field.
    refused(() => withInputDuration(upscaler, parsed.request, video(10.5)), 'video_url');
    refused(() => withInputDuration(upscaler, parsed.request, video(undefined)), 'video_url');
    // The quote takes video_url instead of duration, and needs one of them.
    expect(parseVideoQuote(upscaler, bare, video(6)).price.usd).toBe(60_000_000n);
    refused(() => parseVideoQuote(upscaler, { model: 'x' }), 'duration');
    // Every other video model still needs both.
    const textToVideo = builtIn('lagoon-sim-video');
    refused(() => parseVideoJob(textToVideo, { model: 'x', duration: '5s' }), 'prompt');
    refused(() => parseVideoJob(textToVideo, { model: 'x', prompt: 'p' }), 'duration');
  });
});

describe('video prices', () => {
  it('prices the simulator video model per second × resolution × audio', () => {
    const price = (extra: Record<string, unknown>) =>
      quoteVideo(video, parseVideoJob(video, { ...videoBase, ...extra }).request);
    expect(price({})).toEqual({ usd: nano('0.3'), diem: nano('0.3') });
    expect(price({ resolution: '720p' }).usd).toBe(450_000_000n);
    expect(price({ resolution: '720p', audio: false }).usd).toBe(375_000_000n);
    expect(price({ duration: '10s', audio: false }).usd).toBe(500_000_000n);
    const quote = parseVideoQuote(video, { model: video.id, duration: '5s', resolution: '720p' });
    expect(quote.price).toEqual(price({ resolution: '720p' }));
    refused(() => parseVideoQuote(video, { model: video.id, duration: '7s' }), 'duration');
    refused(() => parseVideoQuote(video, { model: video.id }), 'duration');
  });

  it('prices a durations table, generation and the upscale tiers exactly', () => {
    const table = handMade({
      type: 'video',
      constraints: { durations: ['5s', '10s', 'Auto'], resolutions: ['720p', '1080p'], audio_configurable: true },
      pricing: {
        durations: { '5s': { usd: 0.4 }, '10s': { usd: 0.7, diem: 0.6 }, Auto: { usd: 0.5 } },
        resolution_multipliers: { '1080p': 2.5 },
        audio_multiplier: 1.3333,
      },
    });
    const quote = (body: Record<string, unknown>) => parseVideoQuote(table, { model: 'x', ...body }).price;
    expect(quote({ duration: '10s', resolution: '1080p' })).toEqual({ usd: 2_333_275_000n, diem: 1_999_950_000n });
    expect(quote({ duration: '5s', audio: false })).toEqual({ usd: 400_000_000n, diem: 400_000_000n });
    expect(quote({ duration: 'Auto', audio: false }).usd).toBe(500_000_000n);
    const partial = handMade({
      type: 'video',
      constraints: { durations: ['5s', '10s'] },
      pricing: { durations: { '5s': { usd: 0.4 } } },
    });
    refused(() => parseVideoJob(partial, { model: 'x', prompt: 'p', duration: '10s' }), 'duration');
    const flat = handMade({ type: 'video', pricing: { generation: { usd: 0.3 } }, constraints: { audio: false } });
    expect(parseVideoQuote(flat, { model: 'x', duration: '30s' }).price.usd).toBe(300_000_000n);
    expect(parseVideoQuote(upscaler, { model: 'x', duration: '5s', upscale_factor: 4 }).price.usd).toBe(150_000_000n);
    expect(parseVideoQuote(upscaler, { model: 'x', duration: '10s' }).price.usd).toBe(100_000_000n);
    // 1 nano-unit a second × 1.5: rounded up once, at the end.
    const fine = handMade({
      type: 'video',
      constraints: { audio: false },
      pricing: { per_second: { usd: 0.000000001 }, resolution_multipliers: { '720p': 1.5 } },
    });
    expect(parseVideoQuote(fine, { model: 'x', duration: '3s' }).price.usd).toBe(5n);
  });
});
