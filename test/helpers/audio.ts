import { execFile, spawn } from 'node:child_process';
import { accessSync, chmodSync, constants, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { ffmpegPath } from '../../src/providers/speech/ffmpeg.ts';

const run = promisify(execFile);
const require = createRequire(import.meta.url);

/** The ffprobe of @ffprobe-installer/ffprobe, given its exec bit when the package lost it. */
export function ffprobePath(): string {
  const path = (require('@ffprobe-installer/ffprobe') as { path: string }).path;
  try {
    accessSync(path, constants.X_OK);
  } catch {
    chmodSync(path, statSync(path).mode | 0o111);
  }
  return path;
}

export interface Probed {
  readonly codec: string;
  readonly sampleRate: number;
  /** Seconds, from the decoded packets (the headers of a streamed file carry no length). */
  readonly duration: number;
}

/** ffprobe's view of an audio file: codec, sample rate, and its length summed from the packets. */
export async function probeAudio(bytes: Uint8Array, format?: 'pcm'): Promise<Probed> {
  const input = format === 'pcm' ? ['-f', 's16le', '-ar', '24000', '-ac', '1'] : [];
  const args = [
    ...['-v', 'error', ...input, '-i', 'pipe:0'],
    ...['-show_entries', 'stream=codec_name,sample_rate:packet=pts_time,duration_time', '-of', 'json'],
  ];
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(ffprobePath(), args);
    let text = '';
    let errors = '';
    child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    child.stdin.on('error', () => undefined);
    child.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`ffprobe: ${errors}`))));
    child.stdin.end(bytes);
  });
  const parsed = JSON.parse(out) as {
    streams: { codec_name: string; sample_rate: string }[];
    packets: { pts_time?: string; duration_time?: string }[];
  };
  const end = parsed.packets.reduce(
    (max, p) => Math.max(max, Number(p.pts_time ?? 0) + Number(p.duration_time ?? 0)),
    0,
  );
  return { codec: parsed.streams[0]!.codec_name, sampleRate: Number(parsed.streams[0]!.sample_rate), duration: end };
}

/** A reference sample made by ffmpeg: `seconds` of a tone at `hz`, as WAV or MP3. */
export async function toneSample(seconds: number, hz: number, format: 'wav' | 'mp3'): Promise<Buffer> {
  const { stdout } = await run(
    ffmpegPath(),
    [
      ...['-hide_banner', '-loglevel', 'error', '-f', 'lavfi'],
      ...['-i', `sine=frequency=${hz}:sample_rate=16000:duration=${seconds}`],
      ...['-ac', '1', '-f', format, 'pipe:1'],
    ],
    { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
  );
  return stdout;
}
