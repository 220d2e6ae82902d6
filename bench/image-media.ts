import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';
import { SERVER_ENTRY } from '../build.ts';
import { buildAt, buildEnv, buildRoots, type BuildRoot } from './compare.ts';
import { runLoad, runLoadSides, type LoadResult } from './load.ts';
import { openLoopSides, quantiles, type OpenLoopResult, type OpenLoopTarget } from './open-loop.ts';
import { profileImagePath } from './image-profile.ts';
import { creditAdmin } from './credit.ts';

/**
 * Media benchmarks (`npm run bench:media`), three parts (BENCH_PARTS, default profile,image,chat):
 * - profile: where the time of one 1024×1024 PNG goes on Lagoon's side, step by step, in this process (parse the
 *   upstream's JSON, base64 decode, post-processing with sharp, base64 encode, the JSON answer).
 * - image: Lagoon's added latency over calling an OpenAI-compatible image upstream directly
 *   (bench/image-upstream.ts, a fixed 1024×1024 PNG after BENCH_IMAGE_LATENCY_MS, default 50 ms):
 *   POST /v1/images/generations straight to it and POST /api/v1/images/generations through Lagoon (auth, model
 *   resolution, reserve, post-processing, settle), side by side at the same fixed concurrency
 *   (BENCH_CONCURRENCY, default 4), alternating for BENCH_ROUNDS (default 2) rounds of BENCH_SECONDS (default 10).
 *   The bench model has no watermark (a remote engine's default: its PNG passes through); BENCH_IMAGE_WATERMARK=1
 *   sets `watermark: true` on it, so every picture is decoded, marked and re-encoded.
 * - chat: chat p50/p99 through Lagoon at BENCH_CHAT_RATE (default 200) requests/s, open loop, against the 20 ms
 *   chat upstream (bench/chat-upstream.ts), with and without BENCH_IMAGE_WORKERS (default 8) simulator image
 *   generations (lagoon-sim-image, 1024×1024) running back to back at the same time, from a process of their own
 *   (bench/image-load.ts).
 * Lagoon runs as `npm start` runs it (built, `node dist/main.js`), on PGlite or on DATABASE_URL.
 * BENCH_LAGOON_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) profiles the Lagoon process.
 * BENCH_COMPARE_ROOT=<another checkout> (bench/compare.ts) runs that build beside this one, one row per build: in
 * the image part each worker sends to both builds in turn; in the chat part every scheduled request goes to both,
 * and each build gets its own image-load process of BENCH_IMAGE_WORKERS. The profile part is this checkout's only.
 */
const PARTS = (process.env.BENCH_PARTS ?? 'profile,image,chat').split(',');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const IMAGE_LATENCY_MS = Number(process.env.BENCH_IMAGE_LATENCY_MS ?? 50);
const CHAT_RATE = Number(process.env.BENCH_CHAT_RATE ?? 200);
const IMAGE_WORKERS = Number(process.env.BENCH_IMAGE_WORKERS ?? 8);
const CHAT_LATENCY_MS = 20;
const ADMIN = 'bench-media-admin-key-0123456789';
const PROMPT = 'a lighthouse on a rocky shore at dusk, oil painting';
const root = new URL('..', import.meta.url).pathname;
const children: ChildProcess[] = [];

/** One Lagoon under test: this checkout's, or with BENCH_COMPARE_ROOT the other build's. */
interface Build extends BuildRoot {
  readonly child: ChildProcess;
  readonly origin: string;
  readonly pool: Pool;
}

function start(
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  cwd = root,
): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    let started = false;
    lines.on('line', (line) => {
      const match = started ? null : line.match(ready);
      if (match) {
        started = true;
        resolve({ child, match });
      } else if (started) {
        process.stderr.write(`${line}\n`);
      }
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
}

/** CPU time (user + system) a process has used so far, in ms (/proc/<pid>/stat, clock ticks of 10 ms). */
const cpuMs = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};

/** One POST whose whole answer is read; true for a 200. */
async function post(pool: Pool, path: string, body: string, auth: boolean): Promise<boolean> {
  const response = await pool.request({
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', ...(auth && { authorization: `Bearer ${ADMIN}` }) },
    body,
  });
  const text = await response.body.text();
  if (response.statusCode !== 200 && process.env.BENCH_VERBOSE)
    console.error(path, response.statusCode, text.slice(0, 300));
  return response.statusCode === 200;
}

const out: string[] = [];
const say = (line = '') => {
  out.push(line);
  console.log(line);
};

try {
  say(
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, database: ${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}`,
  );

  if (PARTS.includes('profile')) {
    say('\n### Where one 1024×1024 PNG spends its time in Lagoon (this process, median of 20 runs)\n');
    for (const line of await profileImagePath(20)) say(line);
  }

  if (PARTS.includes('image') || PARTS.includes('chat')) {
    const images = await start(
      ['--import', 'tsx', 'bench/image-upstream.ts', String(IMAGE_LATENCY_MS)],
      process.env,
      /^ready (\d+) (\d+)/,
    );
    const imageOrigin = `http://127.0.0.1:${images.match[1]}`;
    const chat = await start(
      ['--import', 'tsx', 'bench/chat-upstream.ts', String(CHAT_LATENCY_MS)],
      process.env,
      /^ready (\d+)/,
    );
    const chatOrigin = `http://127.0.0.1:${chat.match[1]}`;
    const dir = mkdtempSync(join(tmpdir(), 'lagoon-media-bench-'));
    const configPath = join(dir, 'operator.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        providers: [
          { id: 'bench-images', type: 'openai-compatible', baseUrl: `${imageOrigin}/v1`, timeoutMs: 60_000 },
          { id: 'bench-chat', type: 'openai-compatible', baseUrl: `${chatOrigin}/v1`, timeoutMs: 60_000 },
        ],
        models: [
          {
            id: 'bench-image',
            name: 'Bench image',
            type: 'image',
            provider: 'bench-images',
            upstreamModel: 'bench-image',
            ...(process.env.BENCH_IMAGE_WATERMARK === '1' && { watermark: true }),
            pricing: { generation: { usd: 0.01 } },
          },
          {
            id: 'bench-model',
            name: 'Bench',
            type: 'text',
            provider: 'bench-chat',
            upstreamModel: 'bench',
            pricing: { input: { usd: 0.1 }, output: { usd: 0.2 } },
          },
        ],
      }),
    );
    const baseEnv = {
      ...process.env,
      PORT: '0',
      LOG_LEVEL: 'warn',
      LAGOON_CONFIG: configPath,
      LAGOON_BOOTSTRAP_ADMIN_KEY: ADMIN,
    };
    const nodeArgs = process.env.BENCH_LAGOON_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
    const builds: Build[] = [];
    for (const [n, build] of buildRoots(root).entries()) {
      const env = buildEnv(baseEnv, n, join(dir, `data-${n}`));
      await buildAt(build, root);
      const lagoon = await start([...nodeArgs, SERVER_ENTRY], env, /on (http:\/\/127\.0\.0\.1:\d+)/, build.root);
      await creditAdmin({ root: build.root, adminKey: ADMIN, usd: '1000000', env });
      const origin = lagoon.match[1]!;
      builds.push({
        ...build,
        child: lagoon.child,
        origin,
        pool: new Pool(origin, { connections: 64, keepAliveTimeout: 60_000 }),
      });
    }
    const named = (build: Build, text: string) => (builds.length > 1 ? `${text} (${build.label})` : text);
    const imagePool = new Pool(imageOrigin, { connections: 64, keepAliveTimeout: 60_000 });

    if (PARTS.includes('image')) {
      const body = (model: string) =>
        JSON.stringify({ model, prompt: PROMPT, n: 1, size: '1024x1024', response_format: 'b64_json' });
      const direct = () => post(imagePool, '/v1/images/generations', body('bench-image'), false);
      const throughs = builds.map(
        (build) => () => post(build.pool, '/api/v1/images/generations', body('bench-image'), true),
      );
      for (const through of throughs)
        if (!(await through().catch(() => false)))
          throw new Error('POST /api/v1/images/generations through Lagoon failed (BENCH_VERBOSE=1 shows why)');
      say(
        `\n### Image: ${IMAGE_LATENCY_MS} ms upstream, 1024×1024 PNG (${images.match[2]} bytes), concurrency ${CONCURRENCY}, ${SECONDS} s per run; ms\n`,
      );
      say(
        '| round | direct p50 / p90 / p99 | through Lagoon p50 / p90 / p99 | added p50 / p99 | Lagoon req/s | Lagoon CPU ms/request | errors |',
      );
      say('|---|---:|---:|---:|---:|---:|---:|');
      for (let round = 1; round <= ROUNDS; round += 1) {
        const d = await runLoad(direct, { connections: CONCURRENCY, seconds: SECONDS, warmupSeconds: 2 });
        const before = builds.map((build) => cpuMs(build.child.pid!));
        const results = await runLoadSides(throughs, { connections: CONCURRENCY, seconds: SECONDS, warmupSeconds: 2 });
        for (const [n, l] of results.entries()) {
          const cpu = (cpuMs(builds[n]!.child.pid!) - before[n]!) / Math.max(1, l.requests);
          say(
            `| ${named(builds[n]!, String(round))} | ${triple(d)} | ${triple(l)} | **${diff(d.p50, l.p50)} / ${diff(d.p99, l.p99)}** | ${l.rps} | ${cpu.toFixed(1)} | ${d.errors} / ${l.errors} |`,
          );
        }
      }
    }

    if (PARTS.includes('chat')) {
      const chatBody = JSON.stringify({
        model: 'bench-model',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'Say something about foxes.' }],
      });
      const targets: OpenLoopTarget[] = builds.map((build) => ({
        origin: build.origin,
        path: '/api/v1/chat/completions',
        body: chatBody,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
      }));
      const simBody = JSON.stringify({
        model: 'lagoon-sim-image',
        prompt: PROMPT,
        width: 1024, // the simulator is sized by width and height (aspect_ratio is refused)
        height: 1024,
        format: 'png',
      });
      let generated = 0;
      let failed = 0;
      // The generations run in a process of their own (bench/image-load.ts): reading their pictures in this one
      // would delay the chat load generator's event loop and count against Lagoon.
      // With BENCH_COMPARE_ROOT each build gets an image-load process of its own.
      const withImages = async (): Promise<OpenLoopResult[]> => {
        const loads = await Promise.all(
          builds.map((build) =>
            start(
              ['--import', 'tsx', 'bench/image-load.ts', build.origin, ADMIN, String(IMAGE_WORKERS), simBody],
              process.env,
              /^ready/,
            ),
          ),
        );
        await new Promise((resolve) => setTimeout(resolve, 1000)); // the generations are under way first
        const results = await openLoopSides(targets, { rate: CHAT_RATE, seconds: SECONDS });
        for (const load of loads) {
          const counts = new Promise<RegExpMatchArray | null>((resolve) => {
            createInterface({ input: load.child.stdout! }).on('line', (line) => {
              const done = /^done (\d+) (\d+)/.exec(line);
              if (done) resolve(done);
            });
          });
          load.child.kill('SIGTERM');
          const done = await counts;
          generated += Number(done?.[1] ?? 0);
          failed += Number(done?.[2] ?? 0);
        }
        return results;
      };
      /** Lagoon's event-loop delay p99 / max since the previous read (prom-client resets it on each scrape), ms. */
      const loopDelay = async (build: Build) => {
        const text = await (await fetch(`${build.origin}/metrics`)).text();
        const read = (name: string) =>
          (
            Number(new RegExp(`^lagoon_nodejs_eventloop_lag_${name}_seconds (\\S+)$`, 'm').exec(text)?.[1]) * 1000
          ).toFixed(1);
        return `${read('p99')} / ${read('max')}`;
      };
      await openLoopSides(targets, { rate: CHAT_RATE, seconds: 3 }); // warm-up
      const loopDelays = () => Promise.all(builds.map(loopDelay));
      say(
        `\n### Chat at ${CHAT_RATE} req/s through Lagoon (20 ms upstream), alone and beside ${IMAGE_WORKERS} simulator image generations (1024×1024 PNG) running back to back; ${SECONDS} s per run, ms from each request's scheduled send\n`,
      );
      say(
        '| round | chat alone p50 / p99 | with image generations p50 / p99 | difference p50 / p99 | event-loop delay p99 / max alone, with | chat errors alone / with |',
      );
      say('|---|---:|---:|---:|---:|---:|');
      const pooled = builds.map(() => ({ alone: [] as number[], loaded: [] as number[] }));
      for (let round = 1; round <= ROUNDS; round += 1) {
        await loopDelays();
        const alones = await openLoopSides(targets, { rate: CHAT_RATE, seconds: SECONDS });
        const delaysAlone = await loopDelays();
        const loadeds = await withImages();
        const delaysLoaded = await loopDelays();
        for (const [n, build] of builds.entries()) {
          const [alone, loaded] = [alones[n]!, loadeds[n]!];
          pooled[n]!.alone.push(...alone.latencies);
          pooled[n]!.loaded.push(...loaded.latencies);
          say(
            `| ${named(build, String(round))} | ${alone.p50} / ${alone.p99} | ${loaded.p50} / ${loaded.p99} | **${diff(alone.p50, loaded.p50)} / ${diff(alone.p99, loaded.p99)}** | ${delaysAlone[n]}, ${delaysLoaded[n]} | ${alone.errors} / ${loaded.errors} |`,
          );
        }
      }
      // One round's p99 is its 30th-slowest request or so, and moves by several ms from round to round with nothing
      // changed; all rounds pooled is the figure to compare.
      for (const [n, build] of builds.entries()) {
        const [alone, loaded] = [quantiles(pooled[n]!.alone), quantiles(pooled[n]!.loaded)];
        say(
          `| ${named(build, `all ${ROUNDS} pooled`)} | ${alone.p50} / ${alone.p99} | ${loaded.p50} / ${loaded.p99} | **${diff(alone.p50, loaded.p50)} / ${diff(alone.p99, loaded.p99)}** | | |`,
        );
      }
      say(`\nImage generations completed during the loaded runs: ${generated} (${failed} failed).`);
    }
    await Promise.all([...builds.map((build) => build.pool.close()), imagePool.close()]);
  }
  say(
    `\nCommand: BENCH_IMAGE_WATERMARK=${process.env.BENCH_IMAGE_WATERMARK ?? ''} BENCH_PARTS=${PARTS.join(',')} BENCH_SECONDS=${SECONDS} BENCH_ROUNDS=${ROUNDS} BENCH_CONCURRENCY=${CONCURRENCY}${process.env.BENCH_COMPARE_ROOT ? ` BENCH_COMPARE_ROOT=${process.env.BENCH_COMPARE_ROOT}` : ''} npm run bench:media`,
  );
} finally {
  for (const child of children) child.kill('SIGTERM');
}

function triple(result: LoadResult): string {
  return `${result.p50} / ${result.p90} / ${result.p99}`;
}

function diff(a: number, b: number): string {
  return (Math.round((b - a) * 100) / 100).toFixed(2);
}
