import { once } from 'node:events';
import { UpstreamError } from '../../errors.ts';
import { ChatUpstreamError, cancelledError } from '../upstream-errors.ts';
import { EspeakPool, type EspeakPoolOptions, type SentenceJob } from './espeak-pool.ts';
import { decodeToPcm, startEncoder } from './ffmpeg.ts';
import { estimatePitchHz, voiceSettingsFor, type ClonedVoiceSettings } from './pitch.ts';
import {
  AUDIO_CONTENT_TYPES,
  type SpeechAudio,
  type SpeechCallOptions,
  type SpeechEngine,
  type SpeechRequest,
} from './speech-engine.ts';

/*
 * The built-in speech engine: eSpeak NG (WASM, in worker threads) for the speech, ffmpeg for the encoding. The text
 * is split into sentences, synthesised one after another and fed to one ffmpeg process, whose output is handed on
 * as it comes: the first audio leaves while later sentences are still being synthesised. Formant synthesis: robotic
 * but real, intelligible speech, with no model files and no upstream.
 */

/** eSpeak's default rate in words per minute; speed 1 is this. */
const BASE_RATE = 175;
/** eSpeak's rate bounds (without sonic); speeds beyond them are made up by ffmpeg's atempo. */
const MIN_RATE = 80;
const MAX_RATE = 450;

interface EspeakVoice {
  /** `us` or `gb`. */
  readonly accent: 'us' | 'gb';
  readonly variant: string;
  readonly pitch: number;
}

/** The catalog's voice ids (a/b = American/British, f/m = female/male) as eSpeak voices. */
export const ESPEAK_VOICES: Readonly<Record<string, EspeakVoice>> = {
  af_sky: { accent: 'us', variant: 'f3', pitch: 55 },
  af_bella: { accent: 'us', variant: 'f2', pitch: 60 },
  af_nicole: { accent: 'us', variant: 'f4', pitch: 45 },
  am_adam: { accent: 'us', variant: 'm3', pitch: 45 },
  am_michael: { accent: 'us', variant: 'm1', pitch: 50 },
  bf_emma: { accent: 'gb', variant: 'f3', pitch: 55 },
  bm_george: { accent: 'gb', variant: 'm3', pitch: 40 },
  // OpenAI's voice names, so a client written for OpenAI's speech route works unchanged with the built-in model.
  alloy: { accent: 'us', variant: 'f1', pitch: 50 },
  echo: { accent: 'us', variant: 'm2', pitch: 45 },
  fable: { accent: 'gb', variant: 'm1', pitch: 55 },
  onyx: { accent: 'us', variant: 'm4', pitch: 35 },
  nova: { accent: 'us', variant: 'f5', pitch: 60 },
  shimmer: { accent: 'us', variant: 'f2', pitch: 65 },
};

const FEMALE_VARIANTS = ['f1', 'f2', 'f3', 'f4', 'f5'] as const;
const MALE_VARIANTS = ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8'] as const;

/** 32-bit FNV-1a of a string: a stable, well-spread number per voice id. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/**
 * The eSpeak voice of a catalog voice id: one of the above, else one derived from the id, so that each voice an
 * operator lists for a model (examples/compat-original.yaml lists the original service's: `bf_lily`, `Rachel`,
 * `Puck`, …) sounds its own way and always the same. Kokoro-style ids (`<a|b><f|m>_name`) keep their accent and
 * gender; other names get a variant and pitch from a hash of the name.
 */
export function espeakVoiceFor(id: string): EspeakVoice {
  if (Object.hasOwn(ESPEAK_VOICES, id)) return ESPEAK_VOICES[id]!;
  const hash = fnv1a(id);
  const kokoro = /^([a-z])([fm])_/.exec(id);
  const female = kokoro ? kokoro[2] === 'f' : hash % 2 === 0;
  const variants = female ? FEMALE_VARIANTS : MALE_VARIANTS;
  return {
    accent: kokoro?.[1] === 'b' ? 'gb' : 'us',
    variant: variants[(hash >>> 1) % variants.length]!,
    pitch: (female ? 48 : 34) + ((hash >>> 8) % 16),
  };
}

/** Languages by name, to eSpeak voice ids; ISO 639-1 codes that eSpeak knows are used as they are. */
const LANGUAGE_NAMES: Readonly<Record<string, string>> = {
  english: 'en',
  french: 'fr-fr',
  german: 'de',
  spanish: 'es',
  italian: 'it',
  portuguese: 'pt',
  'brazilian portuguese': 'pt-br',
  dutch: 'nl',
  swedish: 'sv',
  danish: 'da',
  norwegian: 'nb',
  finnish: 'fi',
  polish: 'pl',
  czech: 'cs',
  russian: 'ru',
  ukrainian: 'uk',
  turkish: 'tr',
  greek: 'el',
  hungarian: 'hu',
  romanian: 'ro',
  japanese: 'ja',
  chinese: 'cmn',
  mandarin: 'cmn',
  cantonese: 'yue',
  korean: 'ko',
  hindi: 'hi',
  arabic: 'ar',
  hebrew: 'he',
  vietnamese: 'vi',
  indonesian: 'id',
};
const CODE_ALIASES: Readonly<Record<string, string>> = { fr: 'fr-fr', zh: 'cmn', no: 'nb', iw: 'he', in: 'id' };
const ESPEAK_LANGUAGES = new Set(
  (
    'af am an ar as az ba be bg bn bs ca cmn cs cy da de el en en-gb en-us eo es es-419 et eu fa fi fr-be fr-ch ' +
    'fr-fr ga gd gu he hi hr hu hy id is it ja ka kk kn ko ky la lb lt lv mi mk ml mr ms mt my nb ne nl pa pl pt ' +
    'pt-br ro ru sk sl sq sr sv sw ta te th tr tt uk ur uz vi yue'
  ).split(' '),
);

/** The eSpeak language of a request's `language` (a code or an English name); undefined when not supported. */
export function espeakLanguage(language: string | undefined): string | undefined {
  if (!language) return undefined;
  const key = language.trim().toLowerCase().replace(/_/g, '-');
  const code = LANGUAGE_NAMES[key] ?? CODE_ALIASES[key] ?? key;
  return ESPEAK_LANGUAGES.has(code) ? code : undefined;
}

/** Sentences (and lines), each synthesised on its own; empty pieces dropped. */
export function splitSentences(text: string): string[] {
  return text
    .split(/(?<=[.!?…。！？;])\s+|\n+/u)
    .map((part) => part.trim())
    .filter((part) => /[\p{L}\p{N}]/u.test(part));
}

/** eSpeak's rate for a speed, and the tempo factor ffmpeg applies for what the rate cannot reach. */
export function rateFor(speed: number): { rate: number; tempo: number } {
  const wanted = BASE_RATE * speed;
  const rate = Math.round(Math.min(MAX_RATE, Math.max(MIN_RATE, wanted)));
  return { rate, tempo: wanted / rate };
}

export interface EspeakEngineOptions extends EspeakPoolOptions {
  /**
   * Awaited before each sentence is synthesised (index from 0). Metrics and tests hook in here (a test holds the
   * last sentence back until the first audio arrived, proving the stream starts before the synthesis ends).
   */
  readonly beforeSentence?: (index: number, count: number) => Promise<void> | void;
  /** A shared thread pool (engines of several provider ids); one of their own otherwise. */
  readonly pool?: EspeakPool;
}

export class EspeakEngine implements SpeechEngine {
  readonly simulated = false;
  readonly canClone = true;
  private readonly pool: EspeakPool;
  private readonly ownsPool: boolean;
  /** Analysed reference samples by handle (decoding and pitch tracking a sample takes a moment). */
  private readonly cloned = new Map<string, Promise<ClonedVoiceSettings>>();

  constructor(
    readonly id: string,
    private readonly options: EspeakEngineOptions = {},
  ) {
    this.ownsPool = !options.pool;
    this.pool = options.pool ?? new EspeakPool(options);
  }

  async synthesize(_upstreamModel: string, request: SpeechRequest, options: SpeechCallOptions): Promise<SpeechAudio> {
    const signal = options.signal;
    if (signal?.aborted) throw cancelledError();
    // Held until the audio ends, fails or its caller goes away (a stream nobody reads never runs its finally).
    const release = this.pool.admit();
    signal?.addEventListener('abort', release, { once: true });
    try {
      const sentences = splitSentences(request.text);
      if (sentences.length === 0) sentences.push(request.text.trim() || '.');
      const { rate, tempo } = rateFor(request.speed);
      const { voice, pitch } = await this.voiceOf(request);
      const jobOf = (text: string): SentenceJob => ({ text, voice, rate, pitch });
      // The first sentence before answering: a failure then is an error the gateway can retry elsewhere.
      await this.options.beforeSentence?.(0, sentences.length);
      const first = await this.sentence(jobOf(sentences[0]!), signal);
      return {
        contentType: AUDIO_CONTENT_TYPES[request.format],
        chunks: this.released(this.encode(request, tempo, first, sentences.slice(1).map(jobOf), signal), release),
      };
    } catch (error) {
      release();
      throw error;
    }
  }

  private async *released(chunks: AsyncGenerator<Uint8Array>, release: () => void): AsyncGenerator<Uint8Array> {
    try {
      yield* chunks;
    } finally {
      release();
    }
  }

  /** Analyses a reference sample ahead of its first use (voice cloning checks it can). */
  async analyse(handle: string, sample: Uint8Array, signal?: AbortSignal): Promise<ClonedVoiceSettings> {
    let settings = this.cloned.get(handle);
    if (!settings) {
      settings = decodeToPcm(sample, { rate: 8_000, maxSeconds: 60, signal }).then((decoded) =>
        voiceSettingsFor(estimatePitchHz(decoded.samples, decoded.rate)),
      );
      this.cloned.set(handle, settings);
      if (this.cloned.size > 1_000) this.cloned.delete(this.cloned.keys().next().value!);
      settings.catch(() => this.cloned.delete(handle));
    }
    return settings;
  }

  async close(): Promise<void> {
    if (this.ownsPool) await this.pool.close();
  }

  private async voiceOf(request: SpeechRequest): Promise<{ voice: string; pitch: number }> {
    const language = espeakLanguage(request.language);
    if (typeof request.voice !== 'string') {
      const settings = await this.analyse(request.voice.handle, request.voice.clonedFrom).catch((error: unknown) => {
        throw new UpstreamError(`The cloned voice's sample cannot be read: ${String(error)}`, 'INFERENCE_FAILED');
      });
      const variant = settings.gender === 'female' ? 'f3' : 'm3';
      return { voice: `${language ?? 'en-us'}+${variant}`, pitch: settings.pitch };
    }
    const known = espeakVoiceFor(request.voice);
    const base = language === undefined || language === 'en' ? `en-${known.accent}` : language;
    return { voice: `${base}+${known.variant}`, pitch: known.pitch };
  }

  private async sentence(job: SentenceJob, signal: AbortSignal | undefined): Promise<Uint8Array> {
    try {
      return await this.pool.synthesize(job);
    } catch (error) {
      if (signal?.aborted) throw cancelledError();
      throw new ChatUpstreamError('Speech synthesis failed', 'INFERENCE_FAILED', true, false, String(error));
    }
  }

  /** One ffmpeg process fed sentence by sentence; its output is the audio, chunk by chunk as ffmpeg writes it. */
  private async *encode(
    request: SpeechRequest,
    tempo: number,
    first: Uint8Array,
    rest: readonly SentenceJob[],
    signal: AbortSignal | undefined,
  ): AsyncGenerator<Uint8Array> {
    const encoder = startEncoder(request.format, tempo);
    let stopped = false;
    let failure: unknown;
    let errors = '';
    encoder.stderr.on('data', (chunk: Buffer) => {
      if (errors.length < 2_000) errors += chunk.toString('utf8');
    });
    encoder.stdin.on('error', () => undefined); // ffmpeg gone: its exit status says why
    const closed = once(encoder, 'close') as Promise<[number | null]>;
    const stop = () => {
      stopped = true;
      if (encoder.exitCode === null) encoder.kill('SIGKILL');
    };
    signal?.addEventListener('abort', stop, { once: true });
    const feed = async () => {
      // ffmpeg killed mid-write closes its stdin without a 'drain': the process's end releases the wait too.
      const write = async (pcm: Uint8Array) => {
        if (!encoder.stdin.write(pcm)) await Promise.race([once(encoder.stdin, 'drain'), closed]);
      };
      await write(first);
      for (const [index, job] of rest.entries()) {
        if (stopped) return;
        await this.options.beforeSentence?.(index + 1, rest.length + 1);
        if (stopped) return;
        await write(await this.sentence(job, signal));
      }
      encoder.stdin.end();
    };
    const feeding = feed().catch((error: unknown) => {
      failure ??= error;
      stop();
    });
    try {
      for await (const chunk of encoder.stdout as AsyncIterable<Buffer>) {
        yield new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      }
      const [code] = await closed;
      if (!stopped) await feeding;
      if (signal?.aborted) throw cancelledError();
      if (failure) throw failure;
      if (code !== 0) {
        throw new ChatUpstreamError('Audio encoding failed', 'INFERENCE_FAILED', false, false, errors.slice(-300));
      }
    } finally {
      signal?.removeEventListener('abort', stop);
      stop();
    }
  }
}
