/**
 * The speech-to-text capability (src/providers/): one interface, one adapter per engine (the built-in simulator,
 * an OpenAI-compatible transcription server such as faster-whisper-server/speaches or whisper.cpp's server). The
 * audio has been decoded once by the service (its length prices the call), so engines get both the file as sent
 * and its length.
 */

export interface TranscriptionRequest {
  /** The file as uploaded. */
  readonly audio: Uint8Array;
  readonly filename: string;
  readonly contentType: string | undefined;
  /** Its length, from decoding it. */
  readonly seconds: number;
  /** Mono 16-bit samples at `rate` (what the simulator analyses). */
  readonly samples: Int16Array;
  readonly rate: number;
  readonly language?: string | undefined;
  readonly prompt?: string | undefined;
  readonly temperature?: number | undefined;
  /** Word timestamps wanted (verbose_json with word granularity, or `timestamps`). */
  readonly words: boolean;
}

export interface TranscriptSegment {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

export interface TranscriptWord {
  readonly word: string;
  readonly start: number;
  readonly end: number;
}

export interface Transcript {
  readonly text: string;
  readonly language?: string | undefined;
  readonly segments: readonly TranscriptSegment[];
  readonly words?: readonly TranscriptWord[] | undefined;
}

export interface TranscriptionEngine {
  readonly id: string;
  /** True for the built-in simulator: it measures the audio but does not recognise speech. */
  readonly simulated: boolean;
  transcribe(
    upstreamModel: string,
    request: TranscriptionRequest,
    options: { readonly signal?: AbortSignal | undefined },
  ): Promise<Transcript>;
  close?(): Promise<void>;
}
