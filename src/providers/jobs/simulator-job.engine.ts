import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AUDIO_CONTENT_TYPES } from '../speech/speech-engine.ts';
import { FfmpegJobError, runFfmpegJob, writeChunk } from './ffmpeg-job.ts';
import type {
  AudioJobRequest,
  JobEngine,
  JobRequest,
  JobResult,
  JobRunContext,
  VideoJobRequest,
} from './job-engine.ts';
import { melody, MUSIC_RATE, promptLook, renderMelody } from './simulator-media.ts';

/*
 * The built-in job engine: real media, labelled simulated, made by ffmpeg. A video is an H.264 MP4 of the
 * requested length and size, a moving test pattern coloured by the prompt's hash with a "SIMULATED" caption, and
 * an AAC tone when audio is asked for (an image-to-video job's start image replaces the pattern); the upscale
 * model (an input video and upscaleFactor) scales the input video itself, cut to the paid length. Music is a tune
 * derived from the prompt, encoded as the requested mp3, wav or flac. Files carry a "SIMULATED" comment tag.
 */

const FRAME_RATE = 24;
const LABEL = ['-metadata', 'comment=SIMULATED by the Lagoon simulator', '-metadata', 'title=Lagoon simulated media'];
const AUDIO_CODECS: Readonly<Record<AudioJobRequest['format'], readonly string[]>> = {
  mp3: ['-c:a', 'libmp3lame', '-b:a', '128k', '-f', 'mp3'],
  wav: ['-c:a', 'pcm_s16le', '-f', 'wav'],
  flac: ['-c:a', 'flac', '-f', 'flac'],
};

export interface SimulatorJobOptions {
  /** x264 preset: `ultrafast` keeps a 2-core machine responsive. */
  readonly preset?: string;
}

/** Whether this ffmpeg can draw the caption (drawtext needs a font through fontconfig); learned on first use. */
let captionWorks: boolean | undefined;

export class SimulatorJobEngine implements JobEngine {
  readonly simulated = true;
  private readonly preset: string;

  constructor(
    readonly id = 'simulator',
    options: SimulatorJobOptions = {},
  ) {
    this.preset = options.preset ?? 'ultrafast';
  }

  async run(_upstreamModel: string, request: JobRequest, context: JobRunContext): Promise<JobResult> {
    context.signal.throwIfAborted();
    const dir = await mkdtemp(join(tmpdir(), 'lagoon-job-'));
    try {
      const result =
        request.kind === 'video' ? await this.video(request, context, dir) : await music(request, context, dir);
      context.progress(100);
      return result;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  private async video(request: VideoJobRequest, context: JobRunContext, dir: string): Promise<JobResult> {
    const output = join(dir, 'video.mp4');
    const source = request.inputs.find((input) => input.role === 'video');
    const still = request.inputs.find((input) => input.role === 'image');
    const build = async (caption: boolean) =>
      request.upscaleFactor !== undefined && source
        ? upscaleArgs(request, await writeInput(dir, source.bytes), caption)
        : patternArgs(request, caption, still && (await writeInput(dir, still.bytes)));
    const encode = ['-c:v', 'libx264', '-preset', this.preset, '-crf', '28', '-pix_fmt', 'yuv420p'];
    const finish = [...encode, ...LABEL, '-movflags', '+faststart', '-f', 'mp4', output];
    const render = async (caption: boolean) =>
      runFfmpegJob({
        args: [...(await build(caption)), ...finish],
        durationSeconds: request.durationSeconds,
        signal: context.signal,
        progress: (percent) => context.progress(percent),
      });
    try {
      await render(captionWorks !== false);
      if (captionWorks === undefined) captionWorks = true;
    } catch (error) {
      // A build without a usable font fails on drawtext: remember, and render without the caption.
      if (!(error instanceof FfmpegJobError) || captionWorks === false || !/drawtext|font/i.test(error.stderr))
        throw error;
      captionWorks = false;
      await render(false);
    }
    return { kind: 'media', bytes: await readFile(output), contentType: 'video/mp4' };
  }
}

const CAPTION =
  "drawtext=text='SIMULATED':fontcolor=white:fontsize=h/12:box=1:boxcolor=black@0.5:boxborderw=8:x=(w-tw)/2:y=h-th-h/10";

/** The test pattern, or the start image (image-to-video) filling the frame, then the tone when audio is on. */
function patternArgs(request: VideoJobRequest, caption: boolean, image?: string): string[] {
  const look = promptLook(request.prompt);
  const seconds = request.durationSeconds;
  const { width, height } = request;
  const filters = [`hue=h=${look.hue}:s=${look.saturation}`, ...(caption ? [CAPTION] : [])].join(',');
  const fill = `scale=${width}:${height}:force_original_aspect_ratio=increase,crop=${width}:${height},setsar=1`;
  const picture = image
    ? ['-loop', '1', '-framerate', String(FRAME_RATE), '-t', String(seconds), '-i', image]
    : ['-f', 'lavfi', '-i', `testsrc2=size=${width}x${height}:rate=${FRAME_RATE}:duration=${seconds}`];
  return [
    ...picture,
    ...(request.audio
      ? ['-f', 'lavfi', '-i', `sine=frequency=${look.tone}:sample_rate=44100:duration=${seconds}`]
      : []),
    // Output options from here: every input is declared above.
    ...['-vf', image ? `${fill},${filters}` : filters],
    ...(request.audio ? ['-c:a', 'aac', '-b:a', '96k', '-ac', '2'] : ['-an']),
    ...['-t', String(seconds)],
  ];
}

function upscaleArgs(request: VideoJobRequest, input: string, caption: boolean): string[] {
  const factor = request.upscaleFactor ?? 2;
  const scale = `scale=trunc(iw*${factor}/2)*2:trunc(ih*${factor}/2)*2:flags=lanczos`;
  return [
    ...['-i', input, '-map', '0:v:0'],
    ...(request.audio ? ['-map', '0:a?', '-c:a', 'aac', '-b:a', '128k'] : ['-an']),
    ...['-vf', caption ? `${scale},${CAPTION}` : scale],
    // What was paid for: at most the requested length of the input.
    ...['-t', String(request.durationSeconds)],
  ];
}

async function writeInput(dir: string, bytes: Buffer): Promise<string> {
  const path = join(dir, 'input');
  await writeFile(path, bytes);
  return path;
}

async function music(request: AudioJobRequest, context: JobRunContext, dir: string): Promise<JobResult> {
  const output = join(dir, `track.${request.format}`);
  const notes = melody(
    request.lyrics ? `${request.prompt}\n${request.lyrics}` : request.prompt,
    request.durationSeconds,
    request.speed,
  );
  await runFfmpegJob({
    args: [
      ...['-f', 's16le', '-ar', String(MUSIC_RATE), '-ac', '1', '-i', 'pipe:0'],
      ...AUDIO_CODECS[request.format],
      ...LABEL,
      output,
    ],
    durationSeconds: request.durationSeconds,
    signal: context.signal,
    progress: (percent) => context.progress(percent),
    feed: async (stdin) => {
      for (const chunk of renderMelody(notes)) {
        context.signal.throwIfAborted();
        await writeChunk(stdin, new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      }
    },
  });
  return { kind: 'media', bytes: await readFile(output), contentType: AUDIO_CONTENT_TYPES[request.format] };
}
