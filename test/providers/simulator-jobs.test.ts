import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AudioJobRequest, JobResult, VideoJobRequest } from '../../src/providers/jobs/job-engine.ts';
import { melody } from '../../src/providers/jobs/simulator-media.ts';
import { ffmpegPath } from '../../src/providers/speech/ffmpeg.ts';
import { SimulatorJobEngine } from '../../src/providers/jobs/simulator-job.engine.ts';
import { ffprobePath } from '../helpers/audio.ts';
import { scaled } from '../helpers/time-scale.ts';

const run = promisify(execFile);
const engine = new SimulatorJobEngine();
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sim-jobs-test-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Probe {
  format: { duration: string; tags?: Record<string, string> };
  streams: { codec_type: string; codec_name: string; width?: number; height?: number }[];
}

async function probe(result: JobResult): Promise<Probe> {
  if (result.kind !== 'media') throw new Error('expected media bytes');
  const path = join(dir, `probe-${Math.random().toString(36).slice(2)}`);
  await writeFile(path, result.bytes);
  const { stdout } = await run(ffprobePath(), [
    ...['-v', 'error', '-show_entries', 'format=duration:format_tags:stream=codec_type,codec_name,width,height'],
    ...['-of', 'json', path],
  ]);
  return JSON.parse(stdout) as Probe;
}

const video = (extra: Partial<VideoJobRequest>): VideoJobRequest => ({
  kind: 'video',
  prompt: 'a lighthouse at dusk',
  durationSeconds: 2,
  width: 854,
  height: 480,
  audio: true,
  inputs: [],
  ...extra,
});

const audio = (extra: Partial<AudioJobRequest>): AudioJobRequest => ({
  kind: 'audio',
  prompt: 'a sea shanty',
  durationSeconds: 5,
  forceInstrumental: false,
  format: 'mp3',
  ...extra,
});

const context = (progress: number[] = [], signal = new AbortController().signal) => ({
  signal,
  progress: (percent: number) => progress.push(percent),
});

const within5 = (actual: string, expected: number) => {
  expect(Math.abs(Number(actual) - expected) / expected).toBeLessThanOrEqual(0.05);
};

describe('SimulatorJobEngine video', () => {
  it('renders an H.264 MP4 of the requested length and size, with AAC sound when asked', async () => {
    const progress: number[] = [];
    const result = await engine.run('sim', video({}), context(progress));
    expect(result).toMatchObject({ kind: 'media', contentType: 'video/mp4' });
    const probed = await probe(result);
    within5(probed.format.duration, 2);
    expect(probed.format.tags?.comment).toMatch(/SIMULATED/);
    const streams = probed.streams.map((s) => [s.codec_type, s.codec_name]);
    expect(streams).toEqual(
      expect.arrayContaining([
        ['video', 'h264'],
        ['audio', 'aac'],
      ]),
    );
    expect(probed.streams.find((s) => s.codec_type === 'video')).toMatchObject({ width: 854, height: 480 });
    expect(progress.at(-1)).toBe(100);
    expect(progress.every((p, i) => i === 0 || p >= progress[i - 1]!)).toBe(true);
  });

  it('has no audio stream when audio is false, and takes a portrait size', async () => {
    const probed = await probe(
      await engine.run('sim', video({ audio: false, width: 360, height: 640, durationSeconds: 3 }), context()),
    );
    within5(probed.format.duration, 3);
    expect(probed.streams.map((s) => s.codec_type)).toEqual(['video']);
    expect(probed.streams[0]).toMatchObject({ width: 360, height: 640 });
  });

  it('upscales an input video by the factor', async () => {
    const small = await engine.run('sim', video({ width: 320, height: 180 }), context());
    if (small.kind !== 'media') throw new Error('expected media');
    const input = { role: 'video' as const, bytes: small.bytes, contentType: 'video/mp4', durationSeconds: 2 };
    const upscale = video({ upscaleFactor: 2, inputs: [input], durationSeconds: 1 });
    const probed = await probe(await engine.run('sim', upscale, context()));
    expect(probed.streams.find((s) => s.codec_type === 'video')).toMatchObject({ width: 640, height: 360 });
    expect(probed.streams.some((s) => s.codec_type === 'audio')).toBe(true);
    // At most the paid length of the input.
    within5(probed.format.duration, 1);
  });

  it('fills the frame with the start image of an image-to-video job, for the paid length', async () => {
    const { stdout: png } = await run(
      ffmpegPath(),
      [
        '-hide_banner',
        '-loglevel',
        'error',
        '-f',
        'lavfi',
        '-i',
        'color=c=orange:size=300x200',
        '-frames:v',
        '1',
        '-f',
        'image2pipe',
        '-c:v',
        'png',
        'pipe:1',
      ],
      { encoding: 'buffer' },
    );
    const image = { role: 'image' as const, bytes: png, contentType: 'image/png' };
    const probed = await probe(await engine.run('sim', video({ inputs: [image], width: 480, height: 480 }), context()));
    expect(probed.streams.find((s) => s.codec_type === 'video')).toMatchObject({ width: 480, height: 480 });
    within5(probed.format.duration, 2);
  });

  it('kills ffmpeg when the job is aborted', async () => {
    const controller = new AbortController();
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const job = engine.run('sim', video({ durationSeconds: 30, width: 1920, height: 1080 }), {
      signal: controller.signal,
      progress: () => started(),
    });
    await running;
    const { stdout } = await run('ps', ['-o', 'pid=,comm=', '--ppid', String(process.pid)]);
    const pids = stdout
      .split('\n')
      .filter((line) => line.includes('ffmpeg'))
      .map((line) => Number(line.trim().split(/\s+/)[0]));
    expect(pids.length).toBeGreaterThan(0);
    controller.abort(new Error('cancelled by the test'));
    await expect(job).rejects.toThrow('cancelled by the test');
    await expect.poll(() => pids.filter((pid) => alive(pid)), { timeout: scaled(10_000) }).toEqual([]);
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('SimulatorJobEngine music', () => {
  it.each([
    ['mp3', 'mp3', 'audio/mpeg', 7],
    ['wav', 'pcm_s16le', 'audio/wav', 5],
    ['flac', 'flac', 'audio/flac', 3],
  ] as const)('renders %s of the requested length', async (format, codec, contentType, seconds) => {
    const progress: number[] = [];
    const result = await engine.run('sim', audio({ format, durationSeconds: seconds }), context(progress));
    expect(result).toMatchObject({ kind: 'media', contentType });
    const probed = await probe(result);
    within5(probed.format.duration, seconds);
    expect(probed.streams).toEqual([expect.objectContaining({ codec_type: 'audio', codec_name: codec })]);
    expect(JSON.stringify(probed.format.tags ?? {})).toMatch(/SIMULATED/);
    expect(progress.at(-1)).toBe(100);
  });

  it('derives the tune from the prompt, and speed shortens its notes', () => {
    expect(melody('a', 10)).toEqual(melody('a', 10));
    expect(melody('a', 10)).not.toEqual(melody('b', 10));
    const total = (notes: { seconds: number }[]) => notes.reduce((sum, note) => sum + note.seconds, 0);
    expect(total(melody('a', 10))).toBeCloseTo(10, 6);
    expect(melody('a', 10, 2).length).toBeGreaterThan(melody('a', 10).length);
  });

  it('rejects an aborted job before starting', async () => {
    const controller = new AbortController();
    controller.abort(new Error('already gone'));
    await expect(engine.run('sim', audio({}), context([], controller.signal))).rejects.toThrow('already gone');
  });
});
