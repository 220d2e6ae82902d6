import { createHash } from 'node:crypto';

/*
 * What the simulator draws and plays, derived from a hash of the prompt so that the same prompt gives the same
 * media: the colours of a video's test pattern and its tone, and a music track's melody (a pentatonic tune with a
 * fifth below it, as 16-bit mono PCM).
 */

export const MUSIC_RATE = 44_100;

export interface PromptLook {
  /** Hue rotation of the test pattern, in degrees. */
  readonly hue: number;
  /** Saturation of the test pattern (ffmpeg `hue` s: 0 grey to 10). */
  readonly saturation: number;
  /** The tone of a clip's audio track, in Hz. */
  readonly tone: number;
}

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

export function promptLook(prompt: string): PromptLook {
  const hash = digest(prompt);
  const byte = (i: number) => hash[i] ?? 0;
  return {
    hue: Math.round((byte(0) / 255) * 360),
    saturation: Number((0.6 + (byte(1) / 255) * 1.4).toFixed(2)),
    tone: 220 + byte(2) * 2,
  };
}

/** A small seeded generator (mulberry32): the melody follows from the prompt and nothing else. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const PENTATONIC = [0, 2, 4, 7, 9, 12, 14, 16];

export interface Note {
  readonly frequency: number;
  readonly seconds: number;
}

/** The tune of a prompt: notes of 0.25–0.5 s (÷ speed) on a pentatonic scale, enough to fill `seconds`. */
export function melody(prompt: string, seconds: number, speed = 1): Note[] {
  const hash = digest(prompt);
  const random = seeded(hash.readUInt32LE(0));
  const root = 196 * 2 ** (((hash[4] ?? 0) % 12) / 12);
  const beat = (0.25 + ((hash[5] ?? 0) / 255) * 0.25) / speed;
  const notes: Note[] = [];
  let degree = 0;
  for (let t = 0; t < seconds;) {
    // A walk on the scale: mostly steps, sometimes a leap, so it sounds like a tune rather than noise.
    degree = Math.max(0, Math.min(PENTATONIC.length - 1, degree + Math.floor(random() * 5) - 2));
    const length = Math.min(beat * (random() < 0.2 ? 2 : 1), seconds - t);
    notes.push({ frequency: root * 2 ** ((PENTATONIC[degree] ?? 0) / 12), seconds: length });
    t += length;
  }
  return notes;
}

/** Renders notes as PCM at MUSIC_RATE, each note with a short attack and a decay; a fifth above sounds softly. */
export function* renderMelody(notes: readonly Note[], chunkSeconds = 1): Generator<Int16Array> {
  const chunkSamples = Math.round(MUSIC_RATE * chunkSeconds);
  let chunk = new Int16Array(chunkSamples);
  let filled = 0;
  for (const note of notes) {
    const samples = Math.round(note.seconds * MUSIC_RATE);
    const attack = Math.min(samples, Math.round(MUSIC_RATE * 0.01));
    for (let i = 0; i < samples; i++) {
      const time = i / MUSIC_RATE;
      const envelope = (i < attack ? i / attack : 1) * Math.exp(-3 * (i / samples));
      const voice =
        0.6 * Math.sin(2 * Math.PI * note.frequency * time) + 0.2 * Math.sin(3 * Math.PI * note.frequency * time);
      chunk[filled++] = Math.round(envelope * voice * 0.4 * 32_767);
      if (filled === chunkSamples) {
        yield chunk;
        chunk = new Int16Array(chunkSamples);
        filled = 0;
      }
    }
  }
  if (filled > 0) yield chunk.subarray(0, filled);
}
