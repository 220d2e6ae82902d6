import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ffmpegPath } from '../speech/ffmpeg.ts';
import type { JobEngine, JobRequest, JobResult, JobRunContext } from './job-engine.ts';

/** A temporary stand-in for the simulator engine: an ffmpeg test pattern (video) or a tone (audio). */
export class SimulatorJobsEngine implements JobEngine {
  readonly id = 'simulator';
  readonly simulated = true;

  async run(_upstreamModel: string, request: JobRequest, context: JobRunContext): Promise<JobResult> {
    const dir = await mkdtemp(join(tmpdir(), 'lagoon-job-'));
    try {
      const seconds = String(request.durationSeconds);
      const args =
        request.kind === 'video'
          ? [
              ...['-f', 'lavfi', '-i', `testsrc=size=${request.width}x${request.height}:rate=10:duration=${seconds}`],
              ...(request.audio ? ['-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`] : []),
              ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'],
              ...(request.audio ? ['-c:a', 'aac', '-shortest'] : []),
              join(dir, 'out.mp4'),
            ]
          : ['-f', 'lavfi', '-i', `sine=frequency=330:duration=${seconds}`, join(dir, `out.${request.format}`)];
      await new Promise<void>((resolve, reject) => {
        const child = spawn(ffmpegPath(), ['-hide_banner', '-loglevel', 'error', '-y', ...args], { stdio: 'ignore' });
        const abort = () => child.kill('SIGKILL');
        context.signal.addEventListener('abort', abort, { once: true });
        child.once('error', reject);
        child.once('exit', (code) => {
          context.signal.removeEventListener('abort', abort);
          if (code === 0) resolve();
          else reject(new Error(`ffmpeg exited with ${code}`));
        });
      });
      context.progress(100);
      const file = request.kind === 'video' ? 'out.mp4' : `out.${request.format}`;
      const contentType =
        request.kind === 'video' ? 'video/mp4' : request.format === 'wav' ? 'audio/wav' : 'audio/mpeg';
      return { kind: 'media', bytes: await readFile(join(dir, file)), contentType };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
