import type {
  Transcript,
  TranscriptionEngine,
  TranscriptionRequest,
  TranscriptSegment,
} from './transcription-engine.ts';

/*
 * The built-in transcriber, for a fresh install with no upstream. It does NOT recognise speech: no CPU speech
 * model ships inside an npm package (the whisper.cpp bindings need a model file fetched separately), and a
 * transcript must not be invented. It measures the audio instead: the voiced stretches (20 ms frames whose energy
 * is well above the quietest ones) become segments, and the text says plainly that it is simulated, with the
 * length and the number of voiced stretches, so the answer is deterministic and honest.
 */

const FRAME_SECONDS = 0.02;
/** Gaps shorter than this join two voiced stretches. */
const MIN_GAP_SECONDS = 0.3;
const MIN_SEGMENT_SECONDS = 0.1;

/** The voiced stretches of mono 16-bit audio, by frame energy against the file's own quiet floor. */
export function voicedStretches(samples: Int16Array, rate: number): { start: number; end: number }[] {
  const frame = Math.max(1, Math.round(rate * FRAME_SECONDS));
  const energies: number[] = [];
  for (let offset = 0; offset < samples.length; offset += frame) {
    let sum = 0;
    const end = Math.min(samples.length, offset + frame);
    for (let i = offset; i < end; i += 1) sum += samples[i]! * samples[i]!;
    energies.push(Math.sqrt(sum / Math.max(1, end - offset)));
  }
  if (energies.length === 0) return [];
  const sorted = [...energies].sort((a, b) => a - b);
  const floor = sorted[Math.floor(sorted.length * 0.1)]!;
  const peak = sorted[sorted.length - 1]!;
  // Well above the quiet floor, but a file that is all sound (a tone) still counts as voiced throughout.
  const threshold = Math.max(Math.min(floor * 3, peak * 0.5), peak * 0.1, 200);
  const stretches: { start: number; end: number }[] = [];
  energies.forEach((energy, index) => {
    if (energy < threshold) return;
    const start = index * FRAME_SECONDS;
    const last = stretches.at(-1);
    if (last && start - last.end <= MIN_GAP_SECONDS) last.end = start + FRAME_SECONDS;
    else stretches.push({ start, end: start + FRAME_SECONDS });
  });
  const seconds = samples.length / rate;
  return stretches
    .filter((stretch) => stretch.end - stretch.start >= MIN_SEGMENT_SECONDS)
    .map((stretch) => ({ start: round(stretch.start), end: round(Math.min(stretch.end, seconds)) }));
}

const round = (value: number) => Math.round(value * 100) / 100;

export class SimulatorTranscriptionEngine implements TranscriptionEngine {
  readonly simulated = true;

  constructor(readonly id: string) {}

  transcribe(_upstreamModel: string, request: TranscriptionRequest): Promise<Transcript> {
    const stretches = voicedStretches(request.samples, request.rate);
    const segments: TranscriptSegment[] = stretches.map((stretch, index) => ({
      ...stretch,
      text: `[simulated: speech ${index + 1}, ${round(stretch.end - stretch.start)} s]`,
    }));
    const text =
      `[simulated transcript: Lagoon's built-in transcriber does not recognise speech; ` +
      `${round(request.seconds)} s of audio, ${segments.length} voiced segment${segments.length === 1 ? '' : 's'}]`;
    return Promise.resolve({
      text,
      language: request.language,
      segments,
      ...(request.words && {
        words: segments.map((segment, index) => ({
          word: `[speech${index + 1}]`,
          start: segment.start,
          end: segment.end,
        })),
      }),
    });
  }
}
