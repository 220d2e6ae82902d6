import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, getPriority } from 'node:os';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { createPixelWork } from '../../src/media/images/pixel-work.ts';
import { closePictureThread, pictureThreadId, renderInThread } from '../../src/providers/image/picture-thread.ts';
import { BACKGROUND_NICE, cpuTicksIn } from '../../src/thread-priority.ts';
import { eventually } from '../helpers/eventually.ts';

/** Linux's number for the SCHED_IDLE policy (/proc/<tid>/stat field 41). */
const SCHED_IDLE = 5;
const SCHED_OTHER = 0;

/** name, nice value and policy of each thread of this process (/proc/self/task/<tid>/stat, fields 19 and 41). */
function threads(): { tid: string; name: string; nice: number; policy: number }[] {
  return readdirSync('/proc/self/task').flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return [{ tid, name, nice: Number(fields[16]), policy: Number(fields[38]) }];
    } catch {
      return [];
    }
  });
}

const picture = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="512" height="512"><rect width="100%" height="100%" fill="teal"/></svg>',
);

const hasChrt = (() => {
  try {
    execFileSync('chrt', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe.runIf(process.platform === 'linux')('pixel work priority', () => {
  const vipsThreads = () => threads().filter((thread) => thread.name === 'libvips worker');
  const mainThread = () => threads().find((thread) => thread.tid === String(process.pid))!;

  it('runs libvips worker threads below the event loop after a turn (`low`), and leaves the main thread alone', async () => {
    const slots = createPixelWork(1, 'low');
    await slots.run(() => sharp(picture).png().toBuffer());
    const main = getPriority();
    const vips = vipsThreads();
    expect(vips.length).toBeGreaterThan(0);
    expect(vips.map((thread) => thread.nice)).toEqual(vips.map(() => Math.max(BACKGROUND_NICE, main)));
    expect(getPriority()).toBe(main);
  });

  // SCHED_IDLE is set by util-linux's `chrt`, which every Debian has; without it the threads keep nice 10.
  it.runIf(hasChrt)('puts them under SCHED_IDLE by default (needs `chrt` from util-linux)', async () => {
    // The starvation rule stays out of this test: on a busy host it would rightly raise them.
    const slots = createPixelWork(2, 'idle', undefined, { windowMs: 3_600_000, holdMs: 0 });
    await Promise.all([0, 1].map(() => slots.run(() => sharp(picture).resize(900, 900).png().toBuffer())));
    await eventually(async () => {
      // Threads libvips starts late in a picture are placed at the next turn (a scan costs the event loop).
      await slots.run(async () => undefined);
      const vips = vipsThreads();
      expect(vips.length).toBeGreaterThan(0);
      expect(vips.map((thread) => thread.policy)).toEqual(vips.map(() => SCHED_IDLE));
    });
    expect(mainThread().policy).toBe(SCHED_OTHER);
  });

  const busyLoops: ChildProcess[] = [];
  const stopBusyLoops = () => {
    for (const loop of busyLoops.splice(0)) loop.kill('SIGKILL');
  };
  // Also after a timeout, when the test's own code never resumes.
  afterEach(stopBusyLoops);

  /*
   * Idle cycles only is the default, and a host whose cores other processes keep busy has none: without the
   * starvation rule the picture below would never be drawn (this test would time out).
   */
  it.runIf(hasChrt)(
    'draws a picture beside busy loops on every core: starved threads move to nice 10, then back to idle cycles',
    async () => {
      const slots = createPixelWork(1, 'idle', undefined, { windowMs: 300, holdMs: 1_500 });
      const request = { prompt: 'a lagoon at dusk', width: 128, height: 128, variants: 1, seed: 3, steps: 20 };
      const background = () => {
        const tid = pictureThreadId();
        return threads().filter((thread) => thread.name === 'libvips worker' || thread.tid === tid);
      };
      try {
        // First without the loops, so the picture thread and libvips' workers exist before the load.
        await slots.run(() => renderInThread(request, 1));
        await eventually(async () => expect(pictureThreadId()).toBeDefined());
        // Each loop also ends with this process, should the test be cut off.
        const loop = `while kill -0 ${process.pid} 2>/dev/null; do :; done`;
        busyLoops.push(...Array.from({ length: availableParallelism() }, () => spawn('sh', ['-c', loop])));
        // Drawn before the loops run, the picture would not starve: each has had 50 ms of a core first.
        const loopTicks = () => busyLoops.map((loop) => cpuTicksIn(`/proc/${loop.pid}/stat`) ?? 0);
        await eventually(async () => expect(loopTicks().every((ticks) => ticks >= 5)).toBe(true));
        const drawn = await slots.run(() => renderInThread({ ...request, width: 768, height: 768 }, 2));
        expect((await sharp(drawn).metadata()).width).toBe(768);
        const raised = background().filter((thread) => thread.policy === SCHED_OTHER);
        expect(raised.length).toBeGreaterThan(0);
        stopBusyLoops();
        // After the hold, back on idle cycles.
        await eventually(async () => {
          const now = background().filter((thread) => raised.some((earlier) => earlier.tid === thread.tid));
          expect(now.map((thread) => thread.policy)).toEqual(now.map(() => SCHED_IDLE));
        }, 10_000);
      } finally {
        await closePictureThread();
      }
    },
    60_000,
  );

  // libvips' threads and the picture thread are the process's (test files share processes: vitest.config.ts).
  it.runIf(hasChrt)('moves threads an earlier configuration put on idle cycles when configured `low`', async () => {
    const request = { prompt: 'a lagoon at noon', width: 64, height: 64, variants: 1, seed: 5, steps: 4 };
    const background = () => {
      const tid = pictureThreadId();
      return threads().filter((thread) => thread.name === 'libvips worker' || thread.tid === tid);
    };
    try {
      const idle = createPixelWork(2, 'idle', undefined, { windowMs: 3_600_000, holdMs: 0 });
      await idle.run(() => sharp(picture).resize(900, 900).png().toBuffer());
      await idle.run(() => renderInThread(request, 1));
      await eventually(async () => {
        await idle.run(async () => undefined);
        expect(background().filter((thread) => thread.policy === SCHED_IDLE).length).toBeGreaterThan(1);
      });
      const low = createPixelWork(2, 'low');
      await low.run(() => sharp(picture).png().toBuffer());
      await eventually(async () => expect(background().filter((thread) => thread.policy !== SCHED_OTHER)).toEqual([]));
    } finally {
      await closePictureThread();
    }
  });
});
