/*
 * Writes examples/compat-original.yaml: an operator config that maps every model id of the original service's
 * public model list (its `GET /api/v1/models?type=all` answer, or the bare `data` array) to a local engine of the
 * same type, so that clients written for that service work unchanged against Lagoon (docs/configuration.md,
 * "Clients of the original service").
 *
 *   node --import tsx examples/compat-original-gen.ts models.json > examples/compat-original.yaml
 *
 * Hand-editing the YAML is fine; this only saves typing ~330 ids without a slip.
 */
import { readFileSync } from 'node:fs';

interface ListedModel {
  readonly id: string;
  readonly type: string;
  readonly model_spec?: {
    readonly voices?: readonly string[];
    readonly capabilities?: { readonly supportsReasoning?: boolean };
  };
}

const path = process.argv[2];
if (!path) {
  console.error('usage: node --import tsx examples/compat-original-gen.ts <models.json>');
  process.exit(2);
}
const parsed = JSON.parse(readFileSync(path, 'utf8')) as ListedModel[] | { data: ListedModel[] };
const models = Array.isArray(parsed) ? parsed : parsed.data;

/** The local model an id maps to, by type (and for text and video, by what the model does). */
function target(model: ListedModel): string {
  switch (model.type) {
    case 'text':
      return model.model_spec?.capabilities?.supportsReasoning ? 'compat-reasoner' : 'compat-chat';
    case 'embedding':
      return 'lagoon-sim-embedding';
    case 'image':
      return 'compat-image';
    case 'inpaint':
      return 'lagoon-sim-edit';
    case 'upscale':
      return 'lagoon-sim-upscaler';
    case 'tts':
      return 'compat-speech';
    case 'asr':
      return 'lagoon-sim-transcribe';
    case 'music':
      return model.model_spec?.voices?.length ? 'compat-voiced-audio' : 'lagoon-sim-music';
    case 'video':
      if (/upscale/.test(model.id)) return 'lagoon-sim-video-upscaler';
      return /image-to-video|first-last-frame/.test(model.id) ? 'compat-video-from-image' : 'compat-video';
    default:
      throw new Error(`${model.id}: unknown model type ${model.type}`);
  }
}

const voicesOf = (type: string) => [
  ...new Set(models.filter((m) => m.type === type).flatMap((m) => m.model_spec?.voices ?? [])),
];
/** A YAML scalar: plain when it cannot be read as anything but a string, else JSON-quoted. */
const scalar = (value: string) => (/^[A-Za-z][A-Za-z0-9._/-]*$/.test(value) ? value : JSON.stringify(value));
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

const ttsVoices = voicesOf('tts');
const musicVoices = voicesOf('music');
const TYPES = ['text', 'embedding', 'image', 'inpaint', 'upscale', 'tts', 'asr', 'music', 'video'] as const;
const unknownType = models.find((m) => !(TYPES as readonly string[]).includes(m.type));
if (unknownType) throw new Error(`${unknownType.id}: unknown model type ${unknownType.type}`);

const out: string[] = [
  "# The original service's public model ids, each mapped to a local engine of the same type, so that clients",
  '# written for that service (veniceai-cli, the openai client pointed at /api/v1) work unchanged:',
  '#   LAGOON_CONFIG=examples/compat-original.yaml npm start',
  '# Every engine below runs on this machine (the built-in simulator, eSpeak NG speech, sharp pictures, ffmpeg',
  '# media); bind real providers to the local models (docs/configuration.md) to get real answers under the same',
  '# names. Web search (`venice search`, enable_web_search) still needs a search upstream: SEARXNG_URL or',
  '# BRAVE_SEARCH_API_KEY. Written by examples/compat-original-gen.ts from the public model list; see',
  '# docs/configuration.md, "Clients of the original service".',
  '',
  'models:',
  '  # Text: tools, JSON schemas, vision, web search and log probabilities; reasoning models get a trace first.',
  '  - id: compat-chat',
  '    type: text',
  '    name: Compat Chat (simulator)',
  '    description: Stands in for the original chat models. Replies come from the built-in deterministic simulator.',
  '    contextLength: 262144',
  '    capabilities:',
  '      supportsFunctionCalling: true',
  '      supportsResponseSchema: true',
  '      supportsVision: true',
  '      supportsMultipleImages: true',
  '      maxImages: 10',
  '      supportsWebSearch: true',
  '      supportsLogProbs: true',
  '    pricing: { input: { usd: 0.5 }, output: { usd: 2 }, cache_input: { usd: 0.125 } }',
  '    provider: simulator',
  '  - id: compat-reasoner',
  '    type: text',
  '    name: Compat Reasoner (simulator)',
  '    description: Stands in for the original reasoning models. The built-in simulator writes a reasoning trace, then replies.',
  '    contextLength: 262144',
  '    capabilities:',
  '      supportsFunctionCalling: true',
  '      supportsResponseSchema: true',
  '      supportsVision: true',
  '      supportsMultipleImages: true',
  '      maxImages: 10',
  '      supportsWebSearch: true',
  '      supportsLogProbs: true',
  '      supportsReasoning: true',
  '      supportsReasoningEffort: true',
  '      reasoningEffortOptions: [none, minimal, low, medium, high, xhigh, max]',
  '      defaultReasoningEffort: medium',
  '    pricing: { input: { usd: 1 }, output: { usd: 4 }, cache_input: { usd: 0.25 } }',
  '    provider: simulator',
  '  # Pictures sized by width and height (what the original clients send), made by the simulator image engine.',
  '  - id: compat-image',
  '    type: image',
  '    name: Compat Image (simulator)',
  '    description: Stands in for the original image models; pictures are shapes and gradients from the prompt, marked SIMULATED.',
  '    constraints: { promptCharacterLimit: 7500, steps: { default: 8, max: 30 }, widthHeightDivisor: 8 }',
  '    pricing: { generation: { usd: 0.01 }, upscale: { 2x: { usd: 0.02 }, 4x: { usd: 0.08 } } }',
  '    provider: simulator',
  '  # Speech: eSpeak NG, answering to every voice id of the original speech models.',
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
  '  # Video: answers with a download_url (and retrieve with JSON), which is what the original clients read.',
  '  - id: compat-video',
  '    type: video',
  '    name: Compat Video (simulator)',
  '    description: Stands in for the original text-to-video models; clips are generated test patterns.',
  '    constraints:',
  '      model_type: text-to-video',
  "      aspect_ratios: ['16:9', '9:16', '1:1', '4:3', '3:4', '3:2', '2:3', '21:9']",
  '      resolutions: [480p, 720p, 1080p]',
  '      durations: []',
  '      audio: true',
  '      audio_configurable: true',
  '      prompt_character_limit: 10000',
  '      download_url: true',
  '    pricing: { per_second: { usd: 0.05 }, resolution_multipliers: { 480p: 1, 720p: 1.5, 1080p: 2 } }',
  '    provider: simulator',
  '  - id: compat-video-from-image',
  '    type: video',
  '    name: Compat Video from Image (simulator)',
  '    description: Stands in for the original image-to-video models; clips are generated test patterns.',
  '    constraints:',
  '      model_type: image-to-video',
  "      aspect_ratios: ['16:9', '9:16', '1:1', '4:3', '3:4', '3:2', '2:3', '21:9']",
  '      resolutions: [480p, 720p, 1080p]',
  '      durations: []',
  '      audio: true',
  '      audio_configurable: true',
  '      prompt_character_limit: 10000',
  '      download_url: true',
  '    pricing: { per_second: { usd: 0.05 }, resolution_multipliers: { 480p: 1, 720p: 1.5, 1080p: 2 } }',
  '    provider: simulator',
  '',
  "# The crypto RPC proxy's cost headers also under the names the original's clients read",
  '# (X-Venice-RPC-Credits, X-Venice-RPC-Cost-USD), beside X-Service-RPC-*. Networks: RPC_UPSTREAM_<SLUG> or rpc.networks.',
  'rpc:',
  '  costHeaderPrefix: X-Venice',
  '',
  '# Original model id → local model, per type (GET /api/v1/models/compatibility_mapping?type=<type> lists them).',
  'compatibilityMappings:',
];
for (const type of TYPES) {
  const ofType = models.filter((m) => m.type === type);
  if (ofType.length === 0) continue;
  out.push(`  ${type}:`);
  for (const model of ofType) out.push(`    ${scalar(model.id)}: ${target(model)}`);
}
process.stdout.write(`${out.join('\n')}\n`);
