/**
 * The speech capability (src/providers/): one interface, one adapter per engine (eSpeak NG built in, an
 * OpenAI-compatible speech API such as Kokoro-FastAPI or openedai-speech). An adapter turns text into audio in the
 * requested format, sentence by sentence when asked to stream; validation against the catalog (voices, flags,
 * bounds) and pricing belong to the speech service. Which adapter serves a model is decided by the speech gateway
 * from the model's provider bindings, with retries, fallback and cooldown as chat's gateway has them.
 */

export type AudioFormat = 'mp3' | 'opus' | 'aac' | 'flac' | 'wav' | 'pcm';

export const AUDIO_CONTENT_TYPES: Readonly<Record<AudioFormat, string>> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

export interface SpeechCallOptions {
  readonly signal?: AbortSignal | undefined;
}

export interface SpeechRequest {
  readonly text: string;
  /** A catalog voice id, or the stored reference sample of a cloned voice (`vv_<id>`). */
  readonly voice: string | { readonly clonedFrom: Buffer; readonly handle: string };
  readonly format: AudioFormat;
  /** 0.25–4. */
  readonly speed: number;
  readonly language?: string | undefined;
  readonly prompt?: string | undefined;
  readonly temperature?: number | undefined;
  readonly topP?: number | undefined;
  /** Deliver audio as each sentence is ready (the first bytes before the whole text is synthesised). */
  readonly streaming: boolean;
}

export interface SpeechAudio {
  readonly contentType: string;
  /** The encoded audio; one chunk or many. Ending the iteration early stops the synthesis. */
  readonly chunks: AsyncIterable<Uint8Array>;
}

export interface SpeechEngine {
  readonly id: string;
  readonly simulated: boolean;
  /** Resolves once the engine accepted the call and its first bytes can be read (errors before that are thrown). */
  synthesize(upstreamModel: string, request: SpeechRequest, options: SpeechCallOptions): Promise<SpeechAudio>;
  /** Whether reference samples can be turned into voices (false: cloning with a model bound to it → 400). */
  readonly canClone: boolean;
  close?(): Promise<void>;
}
