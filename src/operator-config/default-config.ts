import type { OperatorConfigFileInput, ProviderConfig } from './schema.ts';

/*
 * The built-in configuration: one deterministic `simulator` provider and a development model of every type, so
 * a fresh install answers every endpoint with no upstream at all. The operator file merges over it
 * (operator-config/load.ts). Prices are realistic so metering and billing can be exercised end to end.
 */

const SIMULATED = 'Development model served by the built-in deterministic simulator; it is not a real model.';
const CREATED = '2026-11-22T00:00:00Z';
const simulated = (what: string) => `${SIMULATED} ${what}`;
const price = (usd: number) => ({ usd, diem: usd });
const UPSCALE_PRICES = { '2x': price(0.02), '4x': price(0.08) };

export const SIMULATOR_PROVIDER_ID = 'simulator';

/** The providers when services are wired without an operator config (as the tests do): the simulator alone. */
export const BUILT_IN_PROVIDERS: readonly ProviderConfig[] = [{ id: SIMULATOR_PROVIDER_ID, type: 'simulator' }];

/** The `style_preset` names the simulator's image engine accepts (GET /image/styles); each tints its pictures. */
export const SIMULATOR_IMAGE_STYLES = [
  '3D Model',
  'Analog Film',
  'Anime',
  'Cinematic',
  'Comic Book',
  'Digital Art',
  'Photographic',
  'Pixel Art',
] as const;

export const defaultOperatorConfig = {
  providers: [{ id: SIMULATOR_PROVIDER_ID, type: 'simulator' }],
  models: [
    {
      id: 'lagoon-sim-chat',
      type: 'text',
      name: 'Lagoon Simulator Chat',
      description: simulated('Replies are synthetic and repeatable: the same request always gets the same answer.'),
      created: CREATED,
      traits: ['default', 'fastest'],
      contextLength: 32_768,
      capabilities: {
        supportsFunctionCalling: true,
        supportsResponseSchema: true,
        supportsVision: true,
        supportsMultipleImages: true,
        maxImages: 4,
        supportsWebSearch: true,
        supportsLogProbs: true,
      },
      constraints: { temperature: { default: 0.7 }, top_p: { default: 0.9 } },
      pricing: { input: price(0.5), output: price(2), cache_input: price(0.125) },
      provider: SIMULATOR_PROVIDER_ID,
    },
    {
      id: 'lagoon-sim-reasoner',
      type: 'text',
      name: 'Lagoon Simulator Reasoner',
      description: simulated('It emits a synthetic reasoning trace before its answer.'),
      created: CREATED,
      traits: ['default_reasoning'],
      contextLength: 65_536,
      capabilities: {
        supportsFunctionCalling: true,
        supportsReasoning: true,
        supportsReasoningEffort: true,
        reasoningEffortOptions: ['low', 'medium', 'high'],
        defaultReasoningEffort: 'medium',
        supportsResponseSchema: true,
      },
      constraints: { temperature: { default: 0.6 }, top_p: { default: 0.95 } },
      pricing: { input: price(1), output: price(4), cache_input: price(0.25) },
      provider: SIMULATOR_PROVIDER_ID,
    },
    {
      id: 'lagoon-sim-omni',
      type: 'text',
      name: 'Lagoon Simulator Omni',
      description: simulated(
        'It takes every content part: images, audio (input_audio) and video (video_url), decodes them and names ' +
          'what it received (size, format, length) at the start of its reply.',
      ),
      created: CREATED,
      contextLength: 131_072,
      capabilities: {
        supportsFunctionCalling: true,
        supportsResponseSchema: true,
        supportsVision: true,
        supportsMultipleImages: true,
        maxImages: 8,
        supportsAudioInput: true,
        supportsVideoInput: true,
        maxVideos: 2,
        supportsWebSearch: true,
        supportsLogProbs: true,
      },
      constraints: { temperature: { default: 0.7 }, top_p: { default: 0.9 } },
      pricing: { input: price(1.25), output: price(5), cache_input: price(0.3125) },
      provider: SIMULATOR_PROVIDER_ID,
    },
    {
      id: 'lagoon-sim-embedding',
      type: 'embedding',
      name: 'Lagoon Simulator Embedding',
      description: simulated(
        'Vectors are feature hashes of the words and character trigrams of the input (unit length; similar spellings score a higher cosine); not a semantic model.',
      ),
      created: CREATED,
      traits: ['default'],
      contextLength: 8_192,
      pricing: { input: price(0.02), output: price(0.02) },
      spec: { embeddingDimensions: 1_024, maxInputTokens: 8_192, supportsCustomDimensions: true },
      provider: SIMULATOR_PROVIDER_ID,
    },
    {
      id: 'lagoon-sim-image',
      type: 'image',
      name: 'Lagoon Simulator Image',
      description: simulated(
        'Images are shapes and gradients derived from the prompt, seed and style, labelled SIMULATED; sized by ' +
          'width and height (default 1024×1024); its styles are listed by GET /image/styles.',
      ),
      created: CREATED,
      traits: ['default', 'fastest'],
      constraints: { promptCharacterLimit: 7_500, steps: { default: 8, max: 30 }, widthHeightDivisor: 8 },
      pricing: { generation: price(0.01), upscale: UPSCALE_PRICES },
      spec: { supportsStyleReferences: false },
      provider: SIMULATOR_PROVIDER_ID,
    },
    {
      id: 'lagoon-sim-image-aspect',
      type: 'image',
      name: 'Lagoon Simulator Image (aspect ratio)',
      description: simulated(
        'The simulator image engine sized by aspect_ratio (width and height are refused), as aspect-ratio models are.',
      ),
      created: CREATED,
      constraints: {
        promptCharacterLimit: 7_500,
        steps: { default: 8, max: 30 },
        widthHeightDivisor: 8,
        aspectRatios: ['1:1', '3:2', '2:3', '16:9', '9:16'],
        defaultAspectRatio: '1:1',
      },
      pricing: { generation: price(0.01), upscale: UPSCALE_PRICES },
      spec: { supportsStyleReferences: false },
      provider: SIMULATOR_PROVIDER_ID,
    },
    {
      id: 'lagoon-sim-image-tiers',
      type: 'image',
      name: 'Lagoon Simulator Image (resolution tiers)',
      description: simulated(
        'The simulator image engine sized by aspect_ratio and resolution: 1K, 2K and 4K name the long side ' +
          '(1024, 2048, 4096 pixels), each tier at its own price.',
      ),
      created: CREATED,
      constraints: {
        promptCharacterLimit: 7_500,
        widthHeightDivisor: 8,
        aspectRatios: ['1:1', '3:2', '2:3', '4:3', '3:4', '16:9', '9:16', '21:9'],
        defaultAspectRatio: '1:1',
        resolutions: ['1K', '2K', '4K'],
        defaultResolution: '1K',
      },
      pricing: {
        resolutions: { '1K': price(0.18), '2K': price(0.23), '4K': price(0.35) },
        upscale: UPSCALE_PRICES,
      },
      spec: { supportsStyleReferences: false },
      provider: SIMULATOR_PROVIDER_ID,
    },
    {
      id: 'lagoon-sim-upscaler',
      type: 'upscale',
      name: 'Lagoon Simulator Upscaler',
      description: simulated('It resamples the input image.'),
      created: CREATED,
      traits: ['default'],
      pricing: { upscale: { '2x': price(0.02), '4x': price(0.08) } },
      provider: SIMULATOR_PROVIDER_ID,
    },
    {
      id: 'lagoon-sim-edit',
      type: 'inpaint',
      name: 'Lagoon Simulator Edit',
      description: simulated('Edits are deterministic overlays on the input image.'),
      created: CREATED,
      traits: ['default'],
      constraints: {
        promptCharacterLimit: 32_768,
        aspectRatios: ['auto', '1:1', '3:2', '16:9', '9:16'],
        combineImages: true,
        maxInputImages: 3,
        singleImageAspectRatio: true,
      },
      pricing: { inpaint: price(0.04), inputImages: { included: 1, additional: price(0.01) } },
      provider: SIMULATOR_PROVIDER_ID,
    },
    {
      id: 'lagoon-sim-speech',
      type: 'tts',
      name: 'Lagoon Simulator Speech',
      description:
        'Real speech from eSpeak NG, a formant synthesizer built in (robotic but intelligible; no upstream, no model ' +
        'files), encoded by ffmpeg. Voices are eSpeak variants (a/b = American/British, f/m = female/male); `language` ' +
        "picks an eSpeak language; cloned voices match the sample speaker's pitch and register.",
      created: CREATED,
      traits: ['default'],
      pricing: { input: price(3.5), voice_clone: price(0.05) },
      spec: {
        voices: [
          ...['af_sky', 'af_bella', 'af_nicole', 'am_adam', 'am_michael', 'bf_emma', 'bm_george'],
          // OpenAI's names too, for clients written for OpenAI's speech route.
          ...['alloy', 'echo', 'fable', 'onyx', 'nova', 'shimmer'],
        ],
        default_voice: 'af_sky',
        voice_cloning: {
          mode: 'zero_shot',
          accepted_formats: ['wav', 'mp3'],
          min_sample_seconds: 5,
          retention_days: 30,
        },
        // Besides its listed voices, `voice` takes the id of a voice cloned with this model (vv_…).
        supports_custom_voice_id: true,
        supported_formats: ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'],
        default_format: 'mp3',
        supportsPromptParam: false,
        supportsTemperatureParam: false,
        supportsTopPParam: false,
      },
      provider: SIMULATOR_PROVIDER_ID,
    },
    {
      id: 'lagoon-sim-transcribe',
      type: 'asr',
      name: 'Lagoon Simulator Transcribe',
      description: simulated(
        'It does not recognise speech: it decodes the audio (ffmpeg), reports its length and voiced segments, and ' +
          'says in the text that the transcript is simulated. Bind an OpenAI-compatible transcription server for real text.',
      ),
      created: CREATED,
      traits: ['default'],
      pricing: { per_audio_second: price(0.0001) },
      provider: SIMULATOR_PROVIDER_ID,
    },
    {
      id: 'lagoon-sim-music',
      type: 'music',
      name: 'Lagoon Simulator Music',
      description: simulated('Tracks are synthetic tones of the requested length, produced as a queued job.'),
      created: CREATED,
      traits: ['default'],
      pricing: {
        durations: {
          '30': { ...price(0.02), min_seconds: 1, max_seconds: 30 },
          '60': { ...price(0.03), min_seconds: 31, max_seconds: 60 },
          '120': { ...price(0.05), min_seconds: 61, max_seconds: 120 },
        },
      },
      spec: {
        duration_options: [30, 60, 120],
        min_duration: 5,
        max_duration: 120,
        default_duration: 30,
        prompt_character_limit: 1_000,
        min_prompt_length: 1,
        lyrics_character_limit: 3_000,
        lyrics_required: false,
        supports_lyrics: true,
        supports_force_instrumental: true,
        supports_lyrics_optimizer: false,
        supports_loop: false,
        supports_custom_voice_id: false,
        supports_language_code: false,
        supports_speed: false,
        supported_formats: ['mp3', 'wav'],
        default_format: 'mp3',
      },
      provider: SIMULATOR_PROVIDER_ID,
    },
    {
      id: 'lagoon-sim-video',
      type: 'video',
      name: 'Lagoon Simulator Video',
      description: simulated('Clips are generated test patterns, produced as a queued job.'),
      created: CREATED,
      traits: ['default'],
      constraints: {
        aspect_ratios: ['16:9', '9:16', '1:1'],
        resolutions: ['480p', '720p'],
        durations: ['5s', '10s'],
        model_type: 'text-to-video',
        audio: true,
        // The price has an audio multiplier: a request chooses whether the clip has sound.
        audio_configurable: true,
        prompt_character_limit: 2_500,
      },
      pricing: { per_second: price(0.05), resolution_multipliers: { '480p': 1, '720p': 1.5 }, audio_multiplier: 1.2 },
      provider: SIMULATOR_PROVIDER_ID,
    },
    {
      id: 'lagoon-sim-video-upscaler',
      type: 'video',
      name: 'Lagoon Simulator Video Upscaler',
      description: simulated('Scales the input video (video_url) by upscale_factor, produced as a queued job.'),
      created: CREATED,
      constraints: {
        aspect_ratios: [],
        resolutions: [],
        durations: ['5s', '10s', '15s'],
        // model_type `video`: the upscale model (video_url required, upscale_factor instead of resolution).
        model_type: 'video',
        audio: true,
        audio_configurable: true,
        prompt_character_limit: 2_500,
      },
      pricing: { per_second: price(0.01), resolution_multipliers: { '1x': 0.5, '2x': 1, '4x': 2 } },
      provider: SIMULATOR_PROVIDER_ID,
    },
  ],
  compatibilityMappings: {
    text: {
      'gpt-4o': 'lagoon-sim-chat',
      'gpt-4o-mini': 'lagoon-sim-chat',
      'gpt-4.1': 'lagoon-sim-chat',
      'o3-mini': 'lagoon-sim-reasoner',
    },
    embedding: { 'text-embedding-3-small': 'lagoon-sim-embedding', 'text-embedding-ada-002': 'lagoon-sim-embedding' },
    image: { 'dall-e-3': 'lagoon-sim-image', 'dall-e-2': 'lagoon-sim-image' },
    tts: { 'tts-1': 'lagoon-sim-speech', 'tts-1-hd': 'lagoon-sim-speech' },
    asr: { 'whisper-1': 'lagoon-sim-transcribe' },
  },
  characters: [
    {
      slug: 'lagoon-guide',
      name: 'Lagoon Guide',
      description: 'A patient guide to this Lagoon instance: models, API keys, billing and the API itself.',
      author: 'Lagoon',
      featured: true,
      tags: ['assistant', 'help', 'api'],
      modelId: 'lagoon-sim-chat',
      systemPrompt:
        'You are Lagoon Guide, a concise and friendly assistant for developers using a Lagoon API instance. ' +
        'Explain models, API keys, balances and endpoints plainly, with short examples. Say so when you are unsure.',
    },
    {
      slug: 'pirate-storyteller',
      name: 'Pirate Storyteller',
      description: 'An old sea captain who spins tall tales of treasure, storms and sea monsters.',
      author: 'Lagoon',
      tags: ['fiction', 'storytelling', 'pirates'],
      modelId: 'lagoon-sim-chat',
      systemPrompt:
        'You are Captain Marlowe, a weathered pirate storyteller. Answer in a playful pirate voice and turn requests ' +
        'into short adventure tales suitable for all ages.',
    },
  ],
} satisfies OperatorConfigFileInput;
