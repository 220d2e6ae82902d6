import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ffmpegPath } from '../providers/speech/ffmpeg.ts';

/*
 * What a sound or video file is, from its bytes: the container as a media type and its length. Used for job
 * inputs (jobs/job-input-fetcher.ts) and by the chat simulator to describe the audio and video it is sent.
 */

/** ffmpeg reading a container's header: a bounded wait even for a hostile file. */
const PROBE_TIMEOUT_MS = 30_000;

/**
 * ffmpeg (`-i file` with no output) prints the container and its length, then exits 1: nothing is decoded. The
 * runtime ships @ffmpeg-installer/ffmpeg only (ffprobe is a development dependency).
 */
export async function probeMedia(
  bytes: Buffer,
): Promise<{ contentType: string; durationSeconds?: number | undefined }> {
  const dir = await mkdtemp(join(tmpdir(), 'lagoon-input-'));
  try {
    const file = join(dir, 'input');
    await writeFile(file, bytes);
    const text = await ffmpegInfo(file);
    return { contentType: mediaType(text), durationSeconds: duration(text) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function ffmpegInfo(file: string): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(ffmpegPath(), ['-hide_banner', '-nostdin', '-i', file], {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: PROBE_TIMEOUT_MS,
    });
    let text = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (text.length < 64_000) text += chunk;
    });
    child.on('error', () => resolve(text));
    child.on('close', () => resolve(text));
  });
}

function mediaType(info: string): string {
  const format = /Input #0, ([^\s,]+(?:,[^\s,]+)*), from/.exec(info)?.[1]?.split(',') ?? [];
  const hasVideo = /Stream #0:\d+.*: Video: (?!mjpeg|png)/.test(info);
  if (format.includes('mov') || format.includes('mp4')) {
    const brand = /major_brand\s*:\s*(\S+)/.exec(info)?.[1];
    if (!hasVideo) return 'audio/mp4';
    return brand === 'qt' ? 'video/quicktime' : 'video/mp4';
  }
  if (format.includes('webm') || format.includes('matroska')) return hasVideo ? 'video/webm' : 'audio/webm';
  if (format.includes('wav')) return 'audio/wav';
  if (format.includes('mp3')) return 'audio/mpeg';
  return format[0] ? `application/x-${format[0]}` : '';
}

function duration(info: string): number | undefined {
  const match = /Duration: (\d+):(\d{2}):(\d{2}(?:\.\d+)?)/.exec(info);
  if (!match) return undefined;
  return Number(match[1]) * 3600 + Number(match[2]) * 60 + Number(match[3]);
}
