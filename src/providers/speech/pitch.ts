/*
 * A speaker's fundamental frequency, estimated from a reference sample for the eSpeak NG engine's crude zero-shot
 * cloning: short-time autocorrelation over 40 ms frames (the caller decodes at a low rate, e.g. 8 kHz) of the voiced (loud enough, periodic) parts of the sample,
 * then the median of the frames' estimates. Good enough to tell a low voice from a high one and to set a pitch.
 */

const MIN_HZ = 60;
const MAX_HZ = 400;
/** A frame counts as voiced when its normalised autocorrelation peak passes this. */
const VOICED = 0.5;
const MAX_FRAMES = 300;

/** The median F0 in Hz of `samples` (mono, at `rate`), or undefined when no frame is voiced. */
export function estimatePitchHz(samples: Int16Array, rate: number): number | undefined {
  const frame = Math.round(rate * 0.04);
  const hop = frame;
  const minLag = Math.floor(rate / MAX_HZ);
  const maxLag = Math.ceil(rate / MIN_HZ);
  if (samples.length < frame + maxLag + 1) return undefined;

  // Frames quieter than a tenth of the loudest one's RMS are silence or breath.
  const rmsOf = (start: number) => {
    let sum = 0;
    for (let i = start; i < start + frame; i += 1) sum += samples[i]! * samples[i]!;
    return Math.sqrt(sum / frame);
  };
  const starts: number[] = [];
  for (let start = 0; start + frame + maxLag + 1 <= samples.length; start += hop) starts.push(start);
  const loudest = starts.reduce((max, start) => Math.max(max, rmsOf(start)), 0);
  if (loudest < 100) return undefined;

  const estimates: number[] = [];
  // At most MAX_FRAMES voiced frames are analysed (enough for a median; a minute of audio would block for long).
  for (const start of starts) {
    if (estimates.length >= MAX_FRAMES) break;
    if (rmsOf(start) < loudest / 10) continue;
    let energy = 0;
    for (let i = start; i < start + frame; i += 1) energy += samples[i]! * samples[i]!;
    const scores = new Float64Array(maxLag + 2);
    let best = 0;
    for (let lag = minLag - 1; lag <= maxLag + 1; lag += 1) {
      let sum = 0;
      let lagged = 0;
      for (let i = start; i < start + frame; i += 1) {
        sum += samples[i]! * samples[i + lag]!;
        lagged += samples[i + lag]! * samples[i + lag]!;
      }
      scores[lag] = sum / Math.sqrt(energy * lagged || 1);
      if (lag >= minLag && lag <= maxLag) best = Math.max(best, scores[lag]!);
    }
    // The shortest lag that peaks near the best score: multiples of the period score almost as high (octave errors).
    let bestLag = 0;
    for (let lag = minLag; lag <= maxLag; lag += 1) {
      const here = scores[lag]!;
      if (here >= best * 0.9 && here >= scores[lag - 1]! && here >= scores[lag + 1]!) {
        bestLag = lag;
        break;
      }
    }
    if (best < VOICED || bestLag === 0) continue;
    // Parabolic interpolation between the neighbouring lags, for a period finer than one sample.
    const [before, here, after] = [scores[bestLag - 1]!, scores[bestLag]!, scores[bestLag + 1]!];
    const curve = before - 2 * here + after;
    const shift = curve === 0 ? 0 : (0.5 * (before - after)) / curve;
    estimates.push(rate / (bestLag + shift));
  }
  if (estimates.length === 0) return undefined;
  estimates.sort((a, b) => a - b);
  return estimates[Math.floor(estimates.length / 2)];
}

export interface ClonedVoiceSettings {
  readonly gender: 'female' | 'male';
  /** eSpeak's pitch, 0–99. */
  readonly pitch: number;
  readonly pitchHz: number | undefined;
}

/**
 * The eSpeak variant and pitch closest to a speaker: female above 165 Hz (adult voices sit around 85–155 Hz for
 * men and 165–255 Hz for women); within each, the pitch parameter moves about 1 Hz per step around the variant's
 * own (about 120 Hz male, 210 Hz female, at pitch 50).
 */
export function voiceSettingsFor(pitchHz: number | undefined): ClonedVoiceSettings {
  if (pitchHz === undefined) return { gender: 'female', pitch: 50, pitchHz };
  const female = pitchHz >= 165;
  const centre = female ? 210 : 120;
  const pitch = Math.round(Math.min(99, Math.max(0, 50 + (pitchHz - centre) * (female ? 0.6 : 0.9))));
  return { gender: female ? 'female' : 'male', pitch, pitchHz };
}
