import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';
import { SERVER_ENTRY } from '../build.ts';
import { buildAt, buildEnv, buildRoots, type BuildRoot } from './compare.ts';
import { openLoop, openLoopSides, type OpenLoopResult, type OpenLoopTarget } from './open-loop.ts';
import { creditAdmin } from './credit.ts';

/**
 * Gateway overhead of POST /api/v1/chat/completions: the same open-loop load sent straight to a local upstream
 * with a fixed latency (bench/chat-upstream.ts, 20 ms) and through Lagoon (auth, model resolution, reserve,
 * settle, usage entry and rollup all on), side by side at the same rates, non-streaming and streaming (time to
 * first byte). Then 1,000 concurrent slow streams and Lagoon's resident memory while they are open.
 * Three processes: the upstream, Lagoon (built and run as `npm start` does: `node dist/main.js`), and this load
 * generator.
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/lagoon_chat_bench npm run bench:chat   # PostgreSQL
 *   npm run bench:chat                                                                        # embedded PGlite
 * BENCH_RATES (default 500,1000,2000), BENCH_SECONDS (default 10), BENCH_WARMUP_SECONDS (default 2), BENCH_STREAMS
 * (default 1000) and BENCH_MODES (default plain,stream) tune it; BENCH_HEAP=1 prints Lagoon's heap figures (from
 * /metrics) before the concurrent streams. For each run through Lagoon it also prints, on stderr, Lagoon's write
 * system calls per request and the CPU the upstream and the load generator used (they share the machine's cores),
 * the server's own warnings and errors, and the reasons of any failed request.
 * BENCH_COMPARE_ROOT=<another checkout> (bench/compare.ts) runs that build beside this one: every scheduled request
 * goes to both builds (order rotated), one row per build; the concurrent streams are opened on both at once.
 */
const RATES = (process.env.BENCH_RATES ?? '500,1000,2000').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const STREAMS = Number(process.env.BENCH_STREAMS ?? 1000);
/** `plain`, `stream` or both (default): which request kinds run at the rates (e.g. to profile one of them). */
const MODES = (process.env.BENCH_MODES ?? 'plain,stream').split(',');
/** Seconds of load at the measured rate before each measured run (BENCH_WARMUP_SECONDS, default 2). */
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
/**
 * For taking the server's cost apart (e.g. the garbage a request leaves, with `--trace-gc-nvp`): another path or body
 * for the requests through Lagoon, e.g. BENCH_THROUGH_PATH=/healthz, or BENCH_THROUGH_BODY='{"model":"no-such"}' for
 * a request refused after auth and parsing. The latency columns then compare unlike requests.
 */
const THROUGH_PATH = process.env.BENCH_THROUGH_PATH ?? '/api/v1/chat/completions';
const THROUGH_BODY = process.env.BENCH_THROUGH_BODY;
const LATENCY_MS = 20;
const ADMIN = 'bench-chat-admin-key-0123456789';
const root = new URL('..', import.meta.url).pathname;
const children: ChildProcess[] = [];

/** One Lagoon under test: this checkout's, or with BENCH_COMPARE_ROOT the other build's. */
interface Build extends BuildRoot {
  readonly child: ChildProcess;
  readonly origin: string;
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
        process.stderr.write(`${line}\n`); // the server's warnings and errors under load
      }
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
}

/** Fields of /proc/<pid>/stat after the command name (field 3 onwards). */
const statFields = (pid: number | string) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
/** CPU time (user + system) a process has used so far, in ms (/proc/<pid>/stat, clock ticks of 10 ms). */
const cpuMs = (pid: number) => {
  const fields = statFields(pid);
  return (Number(fields[11]) + Number(fields[12])) * 10;
};
/** Write system calls (write, writev, send...) a process has made so far (/proc/<pid>/io). */
const writeCalls = (pid: number) => Number(/syscw:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? 0);
/**
 * CPU time of the machine's PostgreSQL server (a PostgreSQL run shares the two cores too), in ms: the postmaster's
 * own and its ended children's (backends and autovacuum workers come and go), plus the live children's.
 */
const postgresCpuMs = () => {
  let total = 0;
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
      const fields = statFields(pid);
      const parentIsPostgres = readFileSync(`/proc/${fields[1]}/comm`, 'utf8').trim() === 'postgres';
      // utime + stime, and for the postmaster also cutime + cstime (its children that ended), in ticks of 10 ms.
      total +=
        (Number(fields[11]) + Number(fields[12]) + (parentIsPostgres ? 0 : Number(fields[13]) + Number(fields[14]))) *
        10;
    } catch {
      // the process ended meanwhile
    }
  }
  return total;
};
const rssMb = (pid: number) =>
  Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024);

try {
  const upstream = await start(
    ['--import', 'tsx', 'bench/chat-upstream.ts', String(LATENCY_MS)],
    process.env,
    /^ready (\d+)/,
  );
  const upstreamOrigin = `http://127.0.0.1:${upstream.match[1]}`;
  const dir = mkdtempSync(join(tmpdir(), 'lagoon-chat-bench-'));
  const configPath = join(dir, 'operator.json');
  const pricing = { input: { usd: 0.1 }, output: { usd: 0.2 } };
  writeFileSync(
    configPath,
    JSON.stringify({
      providers: [
        { id: 'bench-upstream', type: 'openai-compatible', baseUrl: `${upstreamOrigin}/v1`, timeoutMs: 60_000 },
      ],
      models: [
        { id: 'bench-model', name: 'Bench', type: 'text', provider: 'bench-upstream', upstreamModel: 'bench', pricing },
        {
          id: 'bench-slow',
          name: 'Bench slow stream',
          type: 'text',
          provider: 'bench-upstream',
          upstreamModel: 'slow-stream',
          pricing,
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
  // BENCH_LAGOON_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) profiles the Lagoon process alone.
  const lagoonNodeArgs = process.env.BENCH_LAGOON_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  // Each build as `npm start` runs it: built, then the compiled entry; with BENCH_COMPARE_ROOT, two of them.
  const builds: Build[] = [];
  for (const [n, build] of buildRoots(root).entries()) {
    const env = buildEnv(baseEnv, n, join(dir, `data-${n}`));
    await buildAt(build, root);
    const lagoon = await start(
      [...lagoonNodeArgs, process.env.BENCH_LAGOON_ENTRY ?? SERVER_ENTRY],
      env,
      /on (http:\/\/127\.0\.0\.1:\d+)/,
      build.root,
    );
    await creditAdmin({ root: build.root, adminKey: ADMIN, usd: '1000000', env });
    builds.push({ ...build, child: lagoon.child, origin: lagoon.match[1]! });
  }
  const lagoonOrigins = new Set(builds.map((build) => build.origin));

  const body = (model: string, stream: boolean) =>
    JSON.stringify({
      model,
      stream,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Say something about foxes.' }],
    });
  const target = (origin: string, path: string, stream: boolean, auth: boolean): OpenLoopTarget => ({
    origin,
    path,
    stream,
    body:
      lagoonOrigins.has(origin) && THROUGH_BODY
        ? THROUGH_BODY
        : body(lagoonOrigins.has(origin) ? 'bench-model' : 'bench', stream),
    headers: { 'content-type': 'application/json', ...(auth && { authorization: `Bearer ${ADMIN}` }) },
  });
  const direct = (stream: boolean) => target(upstreamOrigin, '/v1/chat/completions', stream, false);
  const through = (stream: boolean) => builds.map((build) => target(build.origin, THROUGH_PATH, stream, true));

  // Warm both paths (connections, JIT, caches) before measuring.
  await openLoopSides(through(false), { rate: 200, seconds: 2 });
  await openLoopSides(through(true), { rate: 200, seconds: 2 });

  const rows: string[] = [];
  const row = (label: string, d: OpenLoopResult, l: OpenLoopResult, stream: boolean, cpuPerRequest: number) => {
    const delta = (a: number, b: number) => Math.round((b - a) * 100) / 100;
    const [dp50, dp99, lp50, lp99] = stream
      ? [d.ttfbP50 ?? 0, d.ttfbP99 ?? 0, l.ttfbP50 ?? 0, l.ttfbP99 ?? 0]
      : [d.p50, d.p99, l.p50, l.p99];
    rows.push(
      `| ${label} | ${d.rate} | ${dp50} / ${dp99} | ${lp50} / ${lp99} | **${delta(dp50, lp50)} / ${delta(dp99, lp99)}** | ${l.achievedRps} | ${cpuPerRequest.toFixed(2)} | ${d.errors} / ${l.errors} |`,
    );
  };
  const signal = () => {
    // BENCH_SIGNAL=1: SIGUSR2 to Lagoon around the measured run (a preloaded profiler starts and stops on it).
    if (process.env.BENCH_SIGNAL) for (const build of builds) process.kill(build.child.pid!, 'SIGUSR2');
  };
  for (const stream of [false, true].filter((streaming) => MODES.includes(streaming ? 'stream' : 'plain'))) {
    for (const rate of RATES) {
      // Each side is warmed at the measured rate first (connections, pools, leases and heap sized for it), so the
      // numbers are the steady state; the step from idle to a high rate is a separate, transient, effect.
      await openLoop(direct(stream), { rate, seconds: WARMUP_SECONDS });
      const d = await openLoop(direct(stream), { rate, seconds: SECONDS });
      await openLoopSides(through(stream), { rate, seconds: WARMUP_SECONDS });
      const before = builds.map((build) => ({ cpu: cpuMs(build.child.pid!), writes: writeCalls(build.child.pid!) }));
      const othersBefore = {
        upstream: cpuMs(upstream.child.pid!),
        generator: cpuMs(process.pid),
        postgres: postgresCpuMs(),
      };
      signal();
      const results = await openLoopSides(through(stream), { rate, seconds: SECONDS });
      signal();
      // What the machine's two cores were asked for besides Lagoon during the same run (the processes share them).
      const sent = results.reduce((sum, l) => sum + l.sent, 0);
      const perRequest = (before: number, pid: number) => ((cpuMs(pid) - before) / sent).toFixed(2);
      for (const [n, build] of builds.entries())
        console.error(
          `${stream ? 'streaming' : 'non-streaming'} ${rate}/s through Lagoon (${build.label}): ${((writeCalls(build.child.pid!) - before[n]!.writes) / results[n]!.sent).toFixed(2)} write system calls per request`,
        );
      console.error(
        `CPU ms per request through Lagoon (all builds): upstream ${perRequest(othersBefore.upstream, upstream.child.pid!)}, load generator ${perRequest(othersBefore.generator, process.pid)}, PostgreSQL ${((postgresCpuMs() - othersBefore.postgres) / sent).toFixed(2)}`,
      );
      // Lagoon's CPU per request: steadier than latency on a shared machine, and what its latency follows.
      for (const [n, build] of builds.entries())
        row(
          `${stream ? 'streaming (time to first byte)' : 'non-streaming'}${builds.length > 1 ? ` (${build.label})` : ''}`,
          d,
          results[n]!,
          stream,
          (cpuMs(build.child.pid!) - before[n]!.cpu) / results[n]!.sent,
        );
    }
  }

  // Concurrent streams: open STREAMS slow streams (20 chunks, 1 s apart) to each build at once and read each one's
  // RSS while all are open.
  const streamRuns = await Promise.all(builds.map((build) => concurrentStreams(build, body('bench-slow', true))));

  console.log(
    `\nMachine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, database: ${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}`,
  );
  console.log(
    `Upstream latency ${LATENCY_MS} ms; ${SECONDS} s per rate; latencies in ms (p50 / p99), measured from each request's scheduled send.\n`,
  );
  console.log(
    '| mode | rate (req/s) | direct p50 / p99 | through Lagoon p50 / p99 | overhead p50 / p99 | Lagoon completed/s | Lagoon CPU ms/request | errors direct / Lagoon |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const line of rows) console.log(line);
  for (const [n, { open, errors, idleRss, peakRss }] of streamRuns.entries())
    console.log(
      `${n === 0 ? '\n' : ''}${STREAMS} concurrent streams${builds.length > 1 ? ` (${builds[n]!.label}, each build at once)` : ''}: ${open} reached their first chunk, ${errors} errors; Lagoon RSS ${idleRss} MB before, peak ${peakRss} MB.`,
    );
} finally {
  for (const child of children) child.kill('SIGTERM');
}

/** STREAMS slow streams opened at once through one build, and its resident memory while they are open. */
async function concurrentStreams(build: Build, body: string) {
  const pool = new Pool(build.origin, { connections: STREAMS + 10 });
  const idleRss = rssMb(build.child.pid!);
  if (process.env.BENCH_HEAP) {
    const metrics = await (await fetch(`${build.origin}/metrics`)).text();
    console.error(
      metrics
        .split('\n')
        .filter((line) =>
          /^lagoon_(nodejs_heap_size|nodejs_external|process_resident|nodejs_heap_space_size_used_bytes)/.test(line),
        )
        .join('\n'),
    );
  }
  let open = 0;
  let peakRss = idleRss;
  let errors = 0;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMb(build.child.pid!))), 200);
  await Promise.all(
    Array.from({ length: STREAMS }, async () => {
      try {
        const response = await pool.request({
          method: 'POST',
          path: '/api/v1/chat/completions',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
          body,
        });
        if (response.statusCode !== 200) errors += 1;
        let counted = false;
        for await (const part of response.body) {
          if (!counted && (part as Buffer).length > 0) {
            open += 1;
            counted = true;
          }
        }
      } catch {
        errors += 1;
      }
    }),
  );
  clearInterval(sampler);
  await pool.close();
  return { open, errors, idleRss, peakRss };
}
