import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { createPixelWork } from '../../src/media/images/pixel-work.ts';
import { BACKGROUND_NICE } from '../../src/thread-priority.ts';
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
    const slots = createPixelWork(2);
    await Promise.all([0, 1].map(() => slots.run(() => sharp(picture).resize(900, 900).png().toBuffer())));
    await eventually(async () => {
      const vips = vipsThreads();
      expect(vips.length).toBeGreaterThan(0);
      expect(vips.map((thread) => thread.policy)).toEqual(vips.map(() => SCHED_IDLE));
    });
    expect(mainThread().policy).toBe(SCHED_OTHER);
  });
});
