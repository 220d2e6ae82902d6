import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatorJobEngine } from '../../src/providers/jobs/simulator-job.engine.ts';

// A machine without fonts: ffmpeg's drawtext cannot start, so the caption is dropped and the clip still renders.
let dir: string;
const saved = process.env.FONTCONFIG_FILE;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sim-jobs-nofont-'));
  const config = join(dir, 'fonts.conf');
  await writeFile(config, '<?xml version="1.0"?>\n<fontconfig></fontconfig>\n');
  process.env.FONTCONFIG_FILE = config;
});
afterAll(async () => {
  if (saved === undefined) delete process.env.FONTCONFIG_FILE;
  else process.env.FONTCONFIG_FILE = saved;
  await rm(dir, { recursive: true, force: true });
});

describe('SimulatorJobEngine without fonts', () => {
  it('renders the clip without its caption, twice', async () => {
    const engine = new SimulatorJobEngine();
    const request = {
      kind: 'video' as const,
      prompt: 'no fonts here',
      durationSeconds: 1,
      width: 320,
      height: 180,
      audio: false,
      inputs: [],
    };
    for (let i = 0; i < 2; i++) {
      const result = await engine.run('sim', request, { signal: new AbortController().signal, progress: () => {} });
      expect(result.kind === 'media' && result.bytes.length > 1_000).toBe(true);
      expect(result).toMatchObject({ contentType: 'video/mp4' });
    }
  });
});
