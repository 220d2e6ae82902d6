import type { ProviderConfig, ProviderType } from '../operator-config/schema.ts';
import type { ChatEngine } from './chat/chat-engine.ts';
import {
  OPENAI_COMPATIBLE_DEFAULT_TIMEOUT_MS,
  OpenAICompatibleEngine,
  OpenAICompatibleOptions,
} from './chat/openai-compatible.engine.ts';
import { SimulatorChatEngine, SimulatorOptions } from './chat/simulator-chat.engine.ts';
import type { EmbeddingEngine } from './embeddings/embedding-engine.ts';
import { OPENAI_EMBEDDINGS_DEFAULT_TIMEOUT_MS, OpenAIEmbeddingsEngine } from './embeddings/openai-embeddings.engine.ts';
import { SimulatorEmbeddingEngine } from './embeddings/simulator-embedding.engine.ts';
import { Automatic1111Engine } from './image/automatic1111.engine.ts';
import type { ImageEngine } from './image/image-engine.ts';
import { IMAGE_UPSTREAM_DEFAULT_TIMEOUT_MS } from './image/image-http.ts';
import { OpenAIImagesEngine } from './image/openai-images.engine.ts';
import { SimulatorImageEngine } from './image/simulator-image.engine.ts';
import type { JobEngine } from './jobs/job-engine.ts';
import { QueueApiJobEngine } from './jobs/queue-api.engine.ts';
import { HttpJsonRpcEngine, jsonRpcSettingsOf } from './json-rpc/http-json-rpc.engine.ts';
import type { JsonRpcEngine } from './json-rpc/json-rpc-engine.ts';
import { SimulatorJobEngine } from './jobs/simulator-job.engine.ts';
import { parseProviderOptions } from './provider-options.ts';
import { BRAVE_DEFAULT_BASE_URL, BraveEngine } from './search/brave.engine.ts';
import { SEARCH_DEFAULTS, type SearchEngine, type SearchUpstreamSettings } from './search/search-engine.ts';
import { SearxngEngine, SearxngOptions } from './search/searxng.engine.ts';
import { EspeakEngine } from './speech/espeak.engine.ts';
import type { EspeakPool } from './speech/espeak-pool.ts';
import { OPENAI_SPEECH_DEFAULT_TIMEOUT_MS, OpenAISpeechEngine } from './speech/openai-speech.engine.ts';
import type { SpeechEngine } from './speech/speech-engine.ts';
import {
  OpenAITranscriptionEngine,
  OPENAI_TRANSCRIPTION_DEFAULT_TIMEOUT_MS,
} from './transcription/openai-transcription.engine.ts';
import { SimulatorTranscriptionEngine } from './transcription/simulator-transcription.engine.ts';
import type { TranscriptionEngine } from './transcription/transcription-engine.ts';

/*
 * Every provider type of the operator config, with the engines it makes, one line each: the gateways build their
 * engines from here only. A new engine type is a folder under src/providers/ and a line below (docs/architecture.md).
 * JSON-RPC nodes are grouped by network by src/crypto-rpc/networks.ts.
 */

/** What the built-in speech engines share (one eSpeak NG thread pool for all of them). */
export interface SpeechShared {
  readonly espeak: () => EspeakPool;
}

/** The engines one provider type makes, by role; a role it lacks is simply absent. */
export interface EngineFactories {
  readonly chat?: (config: ProviderConfig) => ChatEngine;
  readonly image?: (config: ProviderConfig) => ImageEngine;
  readonly speech?: (config: ProviderConfig, shared: SpeechShared) => SpeechEngine;
  readonly embeddings?: (config: ProviderConfig) => EmbeddingEngine;
  readonly transcription?: (config: ProviderConfig) => TranscriptionEngine;
  readonly jobs?: (config: ProviderConfig) => JobEngine;
  readonly search?: (config: ProviderConfig) => SearchEngine;
  readonly jsonRpc?: (config: ProviderConfig) => JsonRpcEngine;
}

export type EngineRole = keyof EngineFactories;

/** The HTTP settings of a provider, with its engine's default timeout. */
const http = (config: ProviderConfig, defaultTimeoutMs: number) => ({
  baseUrl: config.baseUrl ?? '',
  apiKey: config.apiKey,
  timeoutMs: config.timeoutMs ?? defaultTimeoutMs,
  headers: config.headers,
});

const search = (config: ProviderConfig): SearchUpstreamSettings => ({
  baseUrl: config.baseUrl ?? BRAVE_DEFAULT_BASE_URL,
  timeoutMs: config.timeoutMs ?? SEARCH_DEFAULTS.timeoutMs,
  maxRetries: config.maxRetries ?? SEARCH_DEFAULTS.maxRetries,
  headers: config.headers ?? {},
});

export const PROVIDER_REGISTRY: { readonly [T in ProviderType]: EngineFactories } = {
  simulator: {
    chat: (config) => new SimulatorChatEngine(config.id, parseProviderOptions(config, SimulatorOptions)),
    image: (config) => new SimulatorImageEngine(config.id),
    speech: (config, shared) => new EspeakEngine(config.id, { pool: shared.espeak() }),
    embeddings: (config) => new SimulatorEmbeddingEngine(config.id),
    transcription: (config) => new SimulatorTranscriptionEngine(config.id),
    jobs: (config) => new SimulatorJobEngine(config.id),
  },
  'openai-compatible': {
    chat: (config) =>
      new OpenAICompatibleEngine(config.id, {
        ...http(config, OPENAI_COMPATIBLE_DEFAULT_TIMEOUT_MS),
        options: parseProviderOptions(config, OpenAICompatibleOptions),
      }),
    image: (config) =>
      new OpenAIImagesEngine(config.id, {
        ...http(config, IMAGE_UPSTREAM_DEFAULT_TIMEOUT_MS),
        options: parseProviderOptions(config, OpenAIImagesEngine.options),
      }),
    speech: (config) => new OpenAISpeechEngine(config.id, http(config, OPENAI_SPEECH_DEFAULT_TIMEOUT_MS)),
    embeddings: (config) => new OpenAIEmbeddingsEngine(config.id, http(config, OPENAI_EMBEDDINGS_DEFAULT_TIMEOUT_MS)),
    transcription: (config) =>
      new OpenAITranscriptionEngine(config.id, http(config, OPENAI_TRANSCRIPTION_DEFAULT_TIMEOUT_MS)),
  },
  automatic1111: {
    image: (config) =>
      new Automatic1111Engine(config.id, {
        ...http(config, IMAGE_UPSTREAM_DEFAULT_TIMEOUT_MS),
        options: parseProviderOptions(config, Automatic1111Engine.options),
      }),
  },
  queue: { jobs: (config) => new QueueApiJobEngine(config) },
  searxng: {
    search: (config) => new SearxngEngine(config.id, search(config), SearxngOptions.parse(config.options ?? {})),
  },
  brave: { search: (config) => new BraveEngine(config.id, search(config), config.apiKey ?? '') },
  'json-rpc': { jsonRpc: (config) => new HttpJsonRpcEngine(config.id, jsonRpcSettingsOf(config)) },
};

/** The factory of `role` for a provider, if its type makes such an engine. */
export function factoryOf<R extends EngineRole>(config: ProviderConfig, role: R): EngineFactories[R] {
  return PROVIDER_REGISTRY[config.type][role];
}
