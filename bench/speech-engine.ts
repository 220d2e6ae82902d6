import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { EspeakPool as Pool } from '../src/providers/speech/espeak-pool.ts';

/*
 * The built-in speech engine (eSpeak NG in worker threads, src/providers/speech/espeak-pool.ts) without HTTP, billing
 * or ffmpeg: one thread synthesises the same 78-character sentence again and again. Reports the first sentence
 * (thread start and engine load included), then the wall and CPU time (user + system, every thread of this process)
 * per sentence over --sentences more. With --root, the same rounds run on another checkout's pool too, alternated
 * with this one's, for a side-by-side comparison on one host. Each measurement runs in a process of its own: V8
 * shares compiled WebAssembly between the threads of one process, which would blur the comparison.
 *
 *   npm run bench:speech -- [--sentences 20] [--rounds 2] [--root <checkout>]
 */

const { values } = parseArgs({
  options: {
    sentences: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '2' },
    root: { type: 'string' },
    /** Internal: measure this checkout's pool, labelled so, and print its row. */
    only: { type: 'string' },
  },
});
const SENTENCES = Number(values.sentences);
const ROUNDS = Number(values.rounds);
const JOB = {
  text: 'Each sentence is encoded as soon as it is ready, and the audio leaves at once.',
  voice: 'en-us',
  rate: 175,
  pitch: 50,
};

type PoolClass = new (options: { size: number }) => Pool;

async function poolOf(root: string): Promise<PoolClass> {
  const url = pathToFileURL(resolve(root, 'src/providers/speech/espeak-pool.ts')).href;
  return ((await import(url)) as { EspeakPool: PoolClass }).EspeakPool;
}

async function measure(label: string, EspeakPool: PoolClass): Promise<void> {
  const pool = new EspeakPool({ size: 1 });
  try {
    let started = performance.now();
    await pool.synthesize(JOB);
    const firstMs = performance.now() - started;
    const cpu = process.cpuUsage();
    started = performance.now();
    for (let i = 0; i < SENTENCES; i += 1) await pool.synthesize(JOB);
    const wallMs = (performance.now() - started) / SENTENCES;
    const used = process.cpuUsage(cpu);
    const cpuMs = (used.user + used.system) / 1000 / SENTENCES;
    console.log(
      `| ${label} | ${firstMs.toFixed(0)} | ${wallMs.toFixed(0)} | ${cpuMs.toFixed(0)} | ${(1000 / wallMs).toFixed(1)} |`,
    );
  } finally {
    await pool.close();
  }
}

if (values.only) {
  await measure(values.only === '.' ? 'this checkout' : values.only, await poolOf(values.only));
} else {
  const roots = ['.', ...(values.root ? [values.root] : [])];
  console.log(`| build | first sentence (ms) | per sentence, wall (ms) | per sentence, CPU (ms) | sentences/s |`);
  console.log(`| --- | ---: | ---: | ---: | ---: |`);
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const root of roots) {
      const args = [
        '--import',
        'tsx',
        fileURLToPath(import.meta.url),
        '--only',
        root,
        '--sentences',
        String(SENTENCES),
      ];
      process.stdout.write(execFileSync(process.execPath, args, { encoding: 'utf8' }));
    }
  }
}
