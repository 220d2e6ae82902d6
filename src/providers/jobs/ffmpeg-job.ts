import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { ffmpegPath } from '../speech/ffmpeg.ts';

/*
 * One ffmpeg run of a queued job (the binary of @ffmpeg-installer/ffmpeg, located by src/providers/speech/ffmpeg.ts):
 * progress from `-progress pipe:1` (the seconds written against the job's length), and the job's abort signal
 * kills the process at once (SIGKILL: a job being cancelled needs no tidy file).
 */

export interface FfmpegJob {
  readonly args: readonly string[];
  /** The length being rendered, to turn ffmpeg's output time into a percentage. */
  readonly durationSeconds: number;
  readonly signal: AbortSignal;
  progress(percent: number): void;
  /** Writes ffmpeg's stdin (raw PCM); without it stdin is closed. */
  feed?(stdin: Writable): Promise<void>;
}

export class FfmpegJobError extends Error {
  constructor(
    message: string,
    readonly stderr: string,
  ) {
    super(message);
  }
}

const abortReason = (signal: AbortSignal): Error =>
  signal.reason instanceof Error ? signal.reason : new Error('The job was cancelled');

/** Runs ffmpeg to its end; rejects with FfmpegJobError (its last error line) or the abort reason. */
export function runFfmpegJob(job: FfmpegJob): Promise<void> {
  const { signal } = job;
  if (signal.aborted) return Promise.reject(abortReason(signal));
  const args = ['-hide_banner', '-loglevel', 'error', '-nostats', '-progress', 'pipe:1', '-y', ...job.args];
  const child = spawn(ffmpegPath(), args, { stdio: ['pipe', 'pipe', 'pipe'] });
  return new Promise<void>((resolve, reject) => {
    let errors = '';
    let pending = '';
    let settled = false;
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else resolve();
    };
    const onAbort = () => {
      child.kill('SIGKILL');
      finish(abortReason(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        // out_time_ms is in microseconds in this ffmpeg, as out_time_us is in later ones.
        const match = /^out_time_(?:ms|us)=(\d+)/.exec(line);
        if (match && job.durationSeconds > 0)
          job.progress(Math.min(99, Math.floor((Number(match[1]) / 1e6 / job.durationSeconds) * 100)));
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (errors.length < 4_000) errors += chunk.toString('utf8');
    });
    // ffmpeg may stop reading early (it failed, or was killed): a broken pipe is reported by its exit instead.
    child.stdin.on('error', () => undefined);
    child.on('error', (error) => finish(error));
    child.on('close', (code, killed) => {
      if (code === 0) return finish();
      const last = errors.trim().split('\n').at(-1)?.slice(0, 300);
      finish(new FfmpegJobError(`ffmpeg failed: ${last || `exit ${code ?? killed}`}`, errors));
    });
    if (job.feed) {
      job.feed(child.stdin).then(
        () => child.stdin.end(),
        (error: unknown) => {
          child.kill('SIGKILL');
          finish(error instanceof Error ? error : new Error(String(error)));
        },
      );
    } else {
      child.stdin.end();
    }
  });
}

/** Writes `chunk`, waiting while the pipe is full. */
export async function writeChunk(stdin: Writable, chunk: Uint8Array): Promise<void> {
  if (!stdin.write(chunk)) await once(stdin, 'drain');
}
