import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import sharp from 'sharp';
import { buildServer, SERVER_ENTRY } from '../build.ts';
import { creditAdmin } from './credit.ts';

/**
 * Lagoon's resident memory under BENCH_CONCURRENCY (default 20) concurrent image edits of a 4-megapixel picture
 * (2048 × 2048 JPEG, base64 in a JSON body) through HTTP, output at 2K (2048 × 2048 JPEG), by the built-in
 * simulator edit engine. Lagoon runs as `npm start` runs it: the build, started by package.json's `start` script
 * through sh (which sets MALLOC_ARENA_MAX=2 unless the environment has one), in its own process; its RSS is sampled
 * from /proc every 20 ms. BENCH_ROUNDS (default 3) rounds of concurrent requests are sent. BENCH_MALLOC_ARENA_MAX=n
 * passes n to the script; BENCH_MALLOC_ARENA_MAX= (empty) runs `node dist/main.js` without the script, with glibc's
 * default arenas (one per thread, each keeping freed picture memory), for comparison.
 *   npm run bench:image-memory                                                             # embedded PGlite
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/lagoon_image_bench npm run bench:image-memory   # PostgreSQL
 */
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ADMIN = 'bench-image-admin-key-0123456789';
const root = new URL('..', import.meta.url).pathname;
const children: ChildProcess[] = [];

function start(command: string, args: string[], env: NodeJS.ProcessEnv, ready: RegExp) {
  const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise<{ child: ChildProcess; match: RegExpMatchArray }>((resolve, reject) => {
    let started = false;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = started ? null : line.match(ready);
      if (match) {
        started = true;
        resolve({ child, match });
      } else if (started) process.stderr.write(`${line}\n`);
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
}

const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

try {
  const dir = mkdtempSync(join(tmpdir(), 'lagoon-image-bench-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    LOG_LEVEL: 'warn',
    LAGOON_BOOTSTRAP_ADMIN_KEY: ADMIN,
    LAGOON_DATA_DIR: join(dir, 'data'),
  };
  const wanted = process.env.BENCH_MALLOC_ARENA_MAX;
  delete env.MALLOC_ARENA_MAX;
  if (wanted) env.MALLOC_ARENA_MAX = wanted;
  // The script's own mmap threshold is measured, not one left in this shell.
  delete env.MALLOC_MMAP_THRESHOLD_;
  const arenas = wanted === '' ? '' : (wanted ?? '2 (npm start default)');
  await buildServer();
  // The start script as npm runs it (`sh -c`); its `exec` makes the shell's pid Lagoon's.
  const script = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } })
    .scripts.start;
  const ready = /on (http:\/\/127\.0\.0\.1:\d+)/;
  const lagoon =
    wanted === ''
      ? await start(process.execPath, [SERVER_ENTRY], env, ready)
      : await start('sh', ['-c', script], env, ready);
  const origin = lagoon.match[1]!;
  const pid = lagoon.child.pid!;
  await creditAdmin({ root, adminKey: ADMIN, usd: '1000', env });

  // A photo-like 4-megapixel picture: noise compresses poorly, as photos do.
  const side = 2048;
  const noise = Buffer.alloc(side * side * 3);
  for (let i = 0; i < noise.length; i += 1) noise[i] = (i * 2654435761) >>> 24;
  const picture = await sharp(noise, { raw: { width: side, height: side, channels: 3 } })
    .jpeg({ quality: 85 })
    .toBuffer();
  const body = JSON.stringify({
    image: picture.toString('base64'),
    prompt: 'a lighthouse at dusk',
    resolution: '2K',
  });

  const idle = rssMb(pid);
  let peak = idle;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 20);
  const started = performance.now();
  let ok = 0;
  const failures: string[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        const response = await fetch(`${origin}/api/v1/image/edit`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
          body,
        });
        const bytes = await response.arrayBuffer();
        if (response.status === 200 && bytes.byteLength > 0) ok += 1;
        else failures.push(`${response.status} ${Buffer.from(bytes).toString('utf8').slice(0, 200)}`);
      }),
    );
  }
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  const after = rssMb(pid);
  console.log(
    [
      `machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}; database ${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}; MALLOC_ARENA_MAX=${arenas || '(glibc default)'}`,
      `input: ${side}×${side} JPEG, ${(picture.byteLength / 1e6).toFixed(2)} MB (${(body.length / 1e6).toFixed(2)} MB JSON body); output 2K JPEG`,
      `${ROUNDS} rounds × ${CONCURRENCY} concurrent edits: ${ok} ok, ${failures.length} failed, ${seconds.toFixed(1)} s (${((ok / seconds) * 60).toFixed(0)} edits/min)`,
      `Lagoon RSS: ${idle.toFixed(0)} MB idle, peak ${peak.toFixed(0)} MB during, ${after.toFixed(0)} MB after`,
      ...failures.slice(0, 5).map((failure) => `failure: ${failure}`),
    ].join('\n'),
  );
} finally {
  for (const child of children) child.kill();
}
