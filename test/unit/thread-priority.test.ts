import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { createPixelWork } from '../../src/media/images/pixel-work.ts';
import { BACKGROUND_NICE } from '../../src/thread-priority.ts';

/** name and nice value of each thread of this process (/proc/self/task/<tid>/stat, field 19). */
function threads(): { name: string; nice: number }[] {
  return readdirSync('/proc/self/task').flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return [{ name, nice: Number(fields[16]) }];
    } catch {
      return [];
    }
  });
}

const picture = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="512" height="512"><rect width="100%" height="100%" fill="teal"/></svg>',
);

describe.runIf(process.platform === 'linux')('pixel work priority', () => {
  it('runs libvips worker threads below the event loop after a turn, and leaves the main thread alone', async () => {
    const slots = createPixelWork(1);
    await slots.run(() => sharp(picture).png().toBuffer());
    const main = getPriority();
    const vips = threads().filter((thread) => thread.name === 'libvips worker');
    expect(vips.length).toBeGreaterThan(0);
    expect(vips.map((thread) => thread.nice)).toEqual(vips.map(() => Math.max(BACKGROUND_NICE, main)));
    expect(getPriority()).toBe(main);
  });
});
