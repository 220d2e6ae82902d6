import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { accessSync, chmodSync, constants, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AudioFormat } from './speech-engine.ts';

/*
 * The ffmpeg binary of @ffmpeg-installer/ffmpeg, run as a child process (stdin → stdout): encoding synthesised
 * PCM into the response formats, and decoding reference samples for voice cloning. A process per call keeps a
 * crash or a hang to that call; the caller's abort kills it.
 */

/** eSpeak NG's output: 16-bit signed little-endian mono at 22,050 Hz. */
export const PCM_RATE = 22_050;
/** `pcm` responses are raw 16-bit mono at 24 kHz, as OpenAI's speech API sends them. */
export const PCM_OUTPUT_RATE = 24_000;

let binary: string | undefined;

/** The binary's path; given its exec bit when the package was unpacked without it. */
export function ffmpegPath(): string {
  if (binary) return binary;
  const require = createRequire(import.meta.url);
  const path = (require('@ffmpeg-installer/ffmpeg') as { path: string }).path;
  try {
    accessSync(path, constants.X_OK);
  } catch {
    chmodSync(path, statSync(path).mode | 0o111);
  }
  return (binary = path);
}

const ENCODER_ARGS: Readonly<Record<AudioFormat, readonly string[]>> = {
  mp3: ['-c:a', 'libmp3lame', '-b:a', '64k', '-f', 'mp3'],
  opus: ['-c:a', 'libopus', '-b:a', '32k', '-page_duration', '200000', '-f', 'ogg'],
  aac: ['-c:a', 'aac', '-b:a', '64k', '-f', 'adts'],
  flac: ['-c:a', 'flac', '-f', 'flac'],
  wav: ['-c:a', 'pcm_s16le', '-f', 'wav'],
  pcm: ['-ar', String(PCM_OUTPUT_RATE), '-c:a', 'pcm_s16le', '-f', 's16le'],
};

/** atempo takes factors of 0.5–2 in this ffmpeg build: larger changes are a chain of them. */
export function atempoChain(factor: number): string | undefined {
  if (Math.abs(factor - 1) < 0.005) return undefined;
  const steps: string[] = [];
  let rest = factor;
  while (rest > 2) {
    steps.push('atempo=2');
    rest /= 2;
  }
  while (rest < 0.5) {
    steps.push('atempo=0.5');
    rest /= 0.5;
  }
  steps.push(`atempo=${rest.toFixed(4)}`);
  return steps.join(',');
}

/**
 * An ffmpeg process reading PCM (s16le mono at `PCM_RATE`) on stdin and writing `format` on stdout, packet by
 * packet (`-flush_packets 1`), so audio leaves as soon as it is encoded rather than when the input ends.
 */
export function startEncoder(format: AudioFormat, tempo: number): ChildProcessWithoutNullStreams {
  const filter = atempoChain(tempo);
  const args = [
    ...['-hide_banner', '-loglevel', 'error'],
    ...['-probesize', '32', '-analyzeduration', '0', '-fflags', '+nobuffer'],
    ...['-f', 's16le', '-ar', String(PCM_RATE), '-ac', '1', '-i', 'pipe:0'],
    ...(filter ? ['-af', filter] : []),
    ...ENCODER_ARGS[format],
    ...['-flush_packets', '1', 'pipe:1'],
  ];
  return spawn(ffmpegPath(), args, { stdio: ['pipe', 'pipe', 'pipe'] });
}

export interface DecodedSample {
  /** Mono 16-bit samples at `rate`. */
  readonly samples: Int16Array;
  readonly rate: number;
  readonly seconds: number;
}

/**
 * Decodes an audio file (any format ffmpeg reads; the caller restricts which) to mono 16-bit PCM at `rate`.
 * Rejects with the reason when ffmpeg cannot read it. At most `maxSeconds + 1` seconds are decoded.
 */
export function decodeToPcm(
  bytes: Uint8Array,
  options: { rate: number; maxSeconds: number; signal?: AbortSignal | undefined },
): Promise<DecodedSample> {
  const { rate, maxSeconds, signal } = options;
  const args = [
    ...['-hide_banner', '-loglevel', 'error', '-i', 'pipe:0'],
    ...['-t', String(maxSeconds + 1), '-ac', '1', '-ar', String(rate), '-f', 's16le', 'pipe:1'],
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(ffmpegPath(), args, { stdio: ['pipe', 'pipe', 'pipe'], signal, killSignal: 'SIGKILL' });
    const out: Buffer[] = [];
    let errors = '';
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => {
      if (errors.length < 2_000) errors += chunk.toString('utf8');
    });
    // ffmpeg may stop reading early (it has all it needs, or the input is bad): a broken pipe is not our error.
    child.stdin.on('error', () => undefined);
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(lastLine(errors) || `ffmpeg exited with ${code}`));
      const pcm = Buffer.concat(out);
      const samples = new Int16Array(pcm.buffer, pcm.byteOffset, Math.floor(pcm.byteLength / 2));
      resolve({ samples: Int16Array.from(samples), rate, seconds: samples.length / rate });
    });
    child.stdin.end(bytes);
  });
}

const lastLine = (text: string): string =>
  text
    .trim()
    .split('\n')
    .at(-1)
    ?.replace(/^\[[^\]]*\]\s*/, '')
    .slice(0, 200) ?? '';
