/*
 * Writes examples/compat-original.yaml: an operator config in which every model id of the original service's
 * public model list (its `GET /api/v1/models?type=all` answer, or the bare `data` array) is a model alias
 * (`aliasOf`) of a local model of the same type and sizing style, so that clients written for that service find
 * those ids in GET /models and use them unchanged against Lagoon (docs/configuration.md, "Clients of the
 * original service").
 *
 *   node --import tsx examples/compat-original-gen.ts models.json > examples/compat-original.yaml
 *
 * Each alias takes the original's name (description and creation date when listed) and its prices where the
 * target is priced the same way; everything else in its record (capabilities, constraints, context length) is
 * the target's, so the record advertises what the local engine really does. Hand-editing the YAML is fine.
 */
import { readFileSync } from 'node:fs';

type Pricing = Record<string, unknown>;
interface ListedModel {
  readonly id: string;
  readonly type: string;
  readonly created?: number;
  readonly model_spec?: {
    readonly name?: string;
    readonly description?: string;
    readonly voices?: readonly string[];
    readonly pricing?: Pricing;
    readonly capabilities?: { readonly supportsReasoning?: boolean };
  };
}

const path = process.argv[2];
if (!path) {
  console.error('usage: node --import tsx examples/compat-original-gen.ts <models.json>');
  process.exit(2);
}
const parsed = JSON.parse(readFileSync(path, 'utf8')) as ListedModel[] | { data: ListedModel[] };
/** Ids real clients send by default that the public list lacks. */
const EXTRAS: ListedModel[] = [
  { id: 'venice-uncensored', type: 'text', model_spec: { name: 'Venice Uncensored' } },
  { id: 'gpt-4o-mini-tts', type: 'tts', model_spec: { name: 'GPT-4o mini TTS' } },
  { id: 'gpt-4o-transcribe', type: 'asr', model_spec: { name: 'GPT-4o Transcribe' } },
];
const listed = Array.isArray(parsed) ? parsed : parsed.data;
const models = [...listed, ...EXTRAS.filter((extra) => !listed.some((model) => model.id === extra.id))];

/** Prices of the local targets that an alias keeps beside the original's (they charge for what it lacks). */
const EDIT_INPUT_IMAGES = { included: 1, additional: { usd: 0.01 } };
const VOICE_CLONE = { usd: 0.05 };
const RESOLUTION_TIERS = ['1K', '2K', '4K'];

/** The local model an id becomes an alias of, and what of the original's record it keeps beside its name. */
interface Plan {
  readonly target: string;
  readonly pricing?: Pricing;
  readonly constraints?: Record<string, unknown>;
  readonly spec?: Record<string, unknown>;
}

function plan(model: ListedModel): Plan {
  const pricing = model.model_spec?.pricing;
  const voices = model.model_spec?.voices ?? [];
  const voiceSpec = voices.length
    ? { voices, default_voice: voices.includes('af_sky') ? 'af_sky' : voices[0] }
    : undefined;
  switch (model.type) {
    case 'text':
      return {
        target: model.model_spec?.capabilities?.supportsReasoning ? 'compat-reasoner' : 'lagoon-sim-omni',
        ...(pricing && { pricing }),
      };
    case 'embedding':
    case 'asr':
    case 'upscale': {
      const target = {
        embedding: 'lagoon-sim-embedding',
        asr: 'lagoon-sim-transcribe',
        upscale: 'lagoon-sim-upscaler',
      };
      return { target: target[model.type], ...(pricing && { pricing }) };
    }
    case 'image':
      return pricing?.resolutions ? tieredImage(pricing) : { target: 'lagoon-sim-image', ...(pricing && { pricing }) };
    case 'inpaint':
      // The local editor sizes like its input (no resolution tiers), so only the per-edit prices carry over.
      return {
        target: 'lagoon-sim-edit',
        ...(pricing?.inpaint !== undefined && {
          pricing: { inpaint: pricing.inpaint, inputImages: pricing.inputImages ?? EDIT_INPUT_IMAGES },
        }),
      };
    case 'tts': {
      // The newer CLI clones voices with tts-chatterbox-hd: the cloning engine; the rest speak eSpeak voices.
      const cloning = model.id === 'tts-chatterbox-hd' || model.id === 'gpt-4o-mini-tts';
      const input = pricing?.input;
      return {
        target: cloning ? 'lagoon-sim-speech' : 'compat-speech',
        ...(input !== undefined && { pricing: cloning ? { input, voice_clone: VOICE_CLONE } : { input } }),
        ...(voiceSpec && { spec: voiceSpec }),
      };
    }
    case 'music': {
      const target = voices.length ? 'compat-voiced-audio' : 'lagoon-sim-music';
      const shape = target === 'compat-voiced-audio' ? 'per_thousand_characters' : 'durations';
      // Duration tiers must cover the local engine's lengths, so only a voiced model's price carries over.
      const samePrice = shape === 'per_thousand_characters' && pricing?.[shape] !== undefined;
      return { target, ...(samePrice && { pricing }), ...(voiceSpec && { spec: voiceSpec }) };
    }
    case 'video':
      if (/upscale/.test(model.id)) return { target: 'lagoon-sim-video-upscaler' };
      return { target: /image-to-video|first-last-frame/.test(model.id) ? 'compat-video-from-image' : 'compat-video' };
    default:
      throw new Error(`${model.id}: unknown model type ${model.type}`);
  }
}

/** Images priced per resolution tier: the tiered engine, offering only the original's tiers (quality tiers aside). */
function tieredImage(pricing: Pricing): Plan {
  const tiers = Object.keys(pricing.resolutions as Pricing);
  if (!tiers.every((tier) => RESOLUTION_TIERS.includes(tier))) return { target: 'lagoon-sim-image-tiers' };
  return {
    target: 'lagoon-sim-image-tiers',
    pricing: { resolutions: pricing.resolutions, ...(pricing.upscale !== undefined && { upscale: pricing.upscale }) },
    constraints: { resolutions: tiers, defaultResolution: tiers.includes('1K') ? '1K' : tiers[0] },
  };
}

/** A YAML scalar: plain when it cannot be read as anything but a string, else JSON-quoted. */
const scalar = (value: string) =>
  /^[A-Za-z][A-Za-z0-9._/-]*$/.test(value) && !/^(true|false|null|yes|no|on|off)$/i.test(value)
    ? value
    : JSON.stringify(value);
const PLAIN_TEXT = /^[A-Za-z][^:#"'{}[\],&*!|>%@`\n]*$/;
/** A display name: plain where YAML reads it back as the same string, else JSON-quoted. */
const text = (value: string) =>
  PLAIN_TEXT.test(value) && !/\s$/.test(value) && !/^(true|false|null|yes|no|on|off)$/i.test(value)
    ? value
    : JSON.stringify(value);
/** A one-line YAML flow value; a `diem` equal to `usd` is left out (it defaults to usd). */
function flow(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(flow).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const entries = Object.entries(record).filter(([key, v]) => !(key === 'diem' && v === record.usd));
    return `{ ${entries.map(([key, v]) => `${scalar(key)}: ${flow(v)}`).join(', ')} }`;
  }
  // The public list carries float slips (0.028060000000000005); 12 significant digits restore the price.
  if (typeof value === 'number') return String(Number(value.toPrecision(12)));
  return typeof value === 'string' ? scalar(value) : String(value);
}
/** Long flow lists wrapped at ~110 columns, continuation lines indented under the key. */
function wrapped(key: string, values: readonly string[], indent: string): string {
  const lines: string[] = [];
  let line = `${indent}${key}: [`;
  values.forEach((value, i) => {
    const item = scalar(value) + (i < values.length - 1 ? ',' : ']');
    if (line.length + item.length + 1 > 112 && !line.endsWith('[')) {
      lines.push(line);
      line = `${indent}  ${item}`;
    } else line += line.endsWith('[') ? item : ` ${item}`;
  });
  lines.push(values.length === 0 ? `${line}]` : line);
  return lines.join('\n');
}

function aliasEntry(model: ListedModel): string[] {
  const { target, pricing, constraints, spec } = plan(model);
  const lines = [`  - id: ${scalar(model.id)}`, `    aliasOf: ${target}`, `    type: ${model.type}`];
  if (model.model_spec?.name) lines.push(`    name: ${text(model.model_spec.name)}`);
  if (model.model_spec?.description) lines.push(`    description: ${text(model.model_spec.description)}`);
  if (model.created !== undefined) lines.push(`    created: ${model.created}`);
  if (pricing) lines.push(`    pricing: ${flow(pricing)}`);
  if (constraints) lines.push(`    constraints: ${flow(constraints)}`);
  if (spec) {
    const { voices, ...rest } = spec as { voices?: string[] };
    lines.push('    spec:');
    if (voices) lines.push(wrapped('voices', voices, '      '));
    for (const [key, value] of Object.entries(rest)) lines.push(`      ${key}: ${flow(value)}`);
  }
  return lines;
}

const voicesOf = (type: string) => [
  ...new Set(models.filter((m) => m.type === type).flatMap((m) => m.model_spec?.voices ?? [])),
];
const ttsVoices = voicesOf('tts');
const musicVoices = voicesOf('music');

/** Per type: the comment over its aliases. */
const GROUPS = {
  text: 'Text: reasoning ids on compat-reasoner, the others on lagoon-sim-omni (image, audio and video parts).',
  embedding: 'Embeddings: feature-hashing vectors of lagoon-sim-embedding.',
  image:
    'Images: ids priced per image on lagoon-sim-image (width and height in pixels); ids priced per resolution\n' +
    '  # tier on lagoon-sim-image-tiers (aspect ratio + 1K/2K/4K), offering the original tiers at its prices.',
  inpaint: 'Image edits: the local overlay editor lagoon-sim-edit.',
  upscale: 'Upscaling: the Lanczos resampler lagoon-sim-upscaler.',
  tts: 'Speech: eSpeak NG with the original voices; tts-chatterbox-hd and gpt-4o-mini-tts also clone voices.',
  asr: 'Transcription: the built-in transcriber (it measures audio; it does not recognise speech).',
  music: 'Music and sound: queued simulator tracks; ids with voices on compat-voiced-audio.',
  video:
    'Video: queued simulator clips delivered by URL; image-to-video ids on compat-video-from-image, upscalers\n' +
    '  # on lagoon-sim-video-upscaler.',
} as const;
const TYPES = Object.keys(GROUPS) as (keyof typeof GROUPS)[];
const unknownType = models.find((m) => !(TYPES as readonly string[]).includes(m.type));
if (unknownType) throw new Error(`${unknownType.id}: unknown model type ${unknownType.type}`);

const VIDEO_CONSTRAINTS = [
  "      aspect_ratios: ['16:9', '9:16', '1:1', '4:3', '3:4', '3:2', '2:3', '21:9']",
  '      resolutions: [480p, 720p, 1080p]',
  '      durations: []',
  '      audio: true',
  '      audio_configurable: true',
  '      prompt_character_limit: 10000',
  '      download_url: true',
];

const out: string[] = [
  "# The original service's public model ids, each an alias of a local model of the same type and sizing style,",
  '# so that clients written for that service (its CLIs, its MCP server, the openai client pointed at /api/v1)',
  '# find them in GET /models and work unchanged:',
  '#   LAGOON_CONFIG=examples/compat-original.yaml npm start',
  "# An alias keeps the original's name and, where its target is priced the same way, its prices; the rest of",
  "# its record is the local engine's, so it advertises what that engine really does. Every engine runs on this",
  '# machine (the built-in simulator, eSpeak NG speech, sharp pictures, ffmpeg media); bind real providers to the',
  '# local models (docs/configuration.md) to get real answers under the same names. Web search still needs a',
  '# search upstream: SEARXNG_URL or BRAVE_SEARCH_API_KEY. Written by examples/compat-original-gen.ts from the',
  '# public model list; see docs/configuration.md, "Clients of the original service".',
  '',
  'models:',
  '  # Local targets besides the built-in lagoon-sim-* models.',
  '  # Reasoning on the omni simulator: a trace before each reply, every reasoning_effort, every content part.',
  '  - id: compat-reasoner',
  '    aliasOf: lagoon-sim-omni',
  '    type: text',
  '    name: Compat Reasoner (simulator)',
  '    description: Stands in for the original reasoning models. The built-in simulator writes a reasoning trace, then replies.',
  '    capabilities:',
  '      supportsReasoning: true',
  '      supportsReasoningEffort: true',
  '      reasoningEffortOptions: [none, minimal, low, medium, high, xhigh, max]',
  '      defaultReasoningEffort: medium',
  '    pricing: { input: { usd: 1 }, output: { usd: 4 }, cache_input: { usd: 0.25 } }',
  '  # Speech without cloning: eSpeak NG, answering to every voice id of the original speech models.',
  '  - id: compat-speech',
  '    type: tts',
  '    name: Compat Speech (eSpeak NG)',
  '    description: Stands in for the original speech models with the built-in eSpeak NG engine; every original voice id is accepted.',
  '    pricing: { input: { usd: 3.5 } }',
  '    provider: simulator',
  '    spec:',
  wrapped('voices', ttsVoices, '      '),
  '      default_voice: af_sky',
  '      supported_formats: [mp3, opus, aac, flac, wav, pcm]',
  '      default_format: mp3',
  '  # Queued audio with voices (the original spoken-audio models), on the simulator music engine.',
  '  - id: compat-voiced-audio',
  '    type: music',
  '    name: Compat Voiced Audio (simulator)',
  '    description: Stands in for the original queued speech-audio models; tracks are synthetic tones, produced as a queued job.',
  '    pricing: { per_thousand_characters: { usd: 0.1 } }',
  '    provider: simulator',
  '    spec:',
  wrapped('voices', musicVoices, '      '),
  `      default_voice: ${scalar(musicVoices[0] ?? 'default')}`,
  '      supports_lyrics: true',
  '      supports_force_instrumental: true',
  '      min_duration: 5',
  '      max_duration: 120',
  '      default_duration: 30',
  '      prompt_character_limit: 5000',
  '      lyrics_character_limit: 5000',
  '      supported_formats: [mp3, wav]',
  '      default_format: mp3',
  '  # Video answering with a download_url (and retrieve with JSON), which is what the original clients read.',
  '  - id: compat-video',
  '    type: video',
  '    name: Compat Video (simulator)',
  '    description: Stands in for the original text-to-video models; clips are generated test patterns.',
  '    constraints:',
  '      model_type: text-to-video',
  ...VIDEO_CONSTRAINTS,
  '    pricing: { per_second: { usd: 0.05 }, resolution_multipliers: { 480p: 1, 720p: 1.5, 1080p: 2 } }',
  '    provider: simulator',
  '  - id: compat-video-from-image',
  '    type: video',
  '    name: Compat Video from Image (simulator)',
  '    description: Stands in for the original image-to-video models; clips are generated test patterns.',
  '    constraints:',
  '      model_type: image-to-video',
  ...VIDEO_CONSTRAINTS,
  '    pricing: { per_second: { usd: 0.05 }, resolution_multipliers: { 480p: 1, 720p: 1.5, 1080p: 2 } }',
  '    provider: simulator',
];
for (const type of TYPES) {
  const ofType = models.filter((m) => m.type === type);
  if (ofType.length === 0) continue;
  out.push('', `  # ${GROUPS[type]}`);
  for (const model of ofType) out.push(...aliasEntry(model));
}
out.push(
  '',
  "# The crypto RPC proxy's cost headers also under the names the original's clients read",
  '# (X-Venice-RPC-Credits, X-Venice-RPC-Cost-USD), beside X-Service-RPC-*. Networks: RPC_UPSTREAM_<SLUG> or rpc.networks.',
  'rpc:',
  '  costHeaderPrefix: X-Venice',
);
process.stdout.write(`${out.join('\n')}\n`);
