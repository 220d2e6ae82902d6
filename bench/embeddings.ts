import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { SimulatorEmbeddingEngine } from '../src/providers/embeddings/simulator-embedding.engine.ts';
import { creditAdmin } from './credit.ts';

/**
 * Embeddings: (1) the latency Lagoon adds over an OpenAI-compatible upstream for one batch of 64 inputs, requests
 * sent one at a time, alternating direct / through Lagoon (ABAB, so drift hits both alike), for base64 (the
 * `openai` client's default) and float vectors; (2) the built-in simulator engine's throughput, in process and over
 * HTTP. The upstream is a process of its own, as a model server is, and answers a precomputed body at once
 * (1024-dimension vectors), so "direct" is the loopback + HTTP floor; BENCH_UPSTREAM=in-process serves it from this
 * process's event loop instead, as before 2026-11-26 (the client then waits for its own upstream, which hides the
 * gain of a relay that passes the answer on as it comes). Lagoon runs as a child (`node --import tsx src/main.ts`,
 * embedded PGlite unless DATABASE_URL is set, balance leases on as by default).
 *   node --import tsx bench/embeddings.ts        BENCH_REQUESTS (default 400 per side and format); BENCH_FORMATS
 *   (default base64,float) picks the encodings; BENCH_LINK_MBPS paces the upstream's answer as a network link would;
 *   BENCH_LAGOON_NODE_ARGS (default `--import tsx`; add e.g. --cpu-prof) profiles Lagoon alone;
 *   BENCH_LAGOON_ENTRY=bench/floor-proxy.ts runs the bare relay in Lagoon's place (the floor); BENCH_SIGNAL=1 with
 *   bench/alloc-sampler.ts preloaded samples what Lagoon allocates during the measured run;
 *   BENCH_COMPARE_ROOT=<another checkout> runs that build beside this one, each measured request sent to both in
 *   turn (order swapped every time), so that two builds are compared under the same load and drift.
 */
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 400);
const BATCH = 64;
/** BENCH_WARMUP_SECONDS (default 45): requests sent through and around Lagoon before anything is measured. */
const WARMUP_MS = Number(process.env.BENCH_WARMUP_SECONDS ?? 45) * 1_000;
/** BENCH_LINK_MBPS: the upstream sends its answer at this rate (Mbit/s), as over a network; default: at once. */
const LINK_BYTES_PER_MS = (Number(process.env.BENCH_LINK_MBPS ?? 0) * 1_000_000) / 8 / 1_000;
const DIMENSIONS = 1_024;
const ADMIN = 'bench-embeddings-admin-key-0123456789';
const root = new URL('..', import.meta.url).pathname;

const inputs = Array.from(
  { length: BATCH },
  (_, i) => `Document ${i}: the tide pool at the north end of the lagoon holds anemones, crabs and small fish.`,
);
const vector = (i: number) => Array.from({ length: DIMENSIONS }, (_, d) => Math.fround(Math.sin(i + d)));
const answers = {
  float: JSON.stringify({
    object: 'list',
    model: 'bench',
    data: inputs.map((_, index) => ({ object: 'embedding', index, embedding: vector(index) })),
    usage: { prompt_tokens: BATCH * 20, total_tokens: BATCH * 20 },
  }),
  base64: JSON.stringify({
    object: 'list',
    model: 'bench',
    data: inputs.map((_, index) => ({
      object: 'embedding',
      index,
      embedding: Buffer.from(Float32Array.from(vector(index)).buffer).toString('base64'),
    })),
    usage: { prompt_tokens: BATCH * 20, total_tokens: BATCH * 20 },
  }),
};

/** The upstream in a child process (this file with --serve-upstream), or in this process. */
async function startUpstream(): Promise<{ url: string; close: () => void }> {
  if (process.env.BENCH_UPSTREAM === 'in-process') return serveUpstream();
  const child = spawn(process.execPath, ['--import', 'tsx', new URL(import.meta.url).pathname, '--serve-upstream'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      const found = /upstream (http:\S+)/.exec(chunk.toString());
      if (found) resolve(found[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the upstream exited with ${code}`)));
  });
  return { url, close: () => child.kill('SIGTERM') };
}

async function serveUpstream(): Promise<{ url: string; close: () => void }> {
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { encoding_format?: string };
      res.writeHead(200, { 'content-type': 'application/json' });
      const answer = Buffer.from(body.encoding_format === 'base64' ? answers.base64 : answers.float);
      if (LINK_BYTES_PER_MS === 0) return res.end(answer);
      // A link of BENCH_LINK_MBPS: one millisecond's bytes per timer tick.
      const send = (from: number) => {
        const to = from + LINK_BYTES_PER_MS;
        if (to >= answer.length) return res.end(answer.subarray(from));
        res.write(answer.subarray(from, to));
        setTimeout(() => send(to), 1);
      };
      send(0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}`, close: () => server.close() };
}

function startLagoon(configPath: string, dataDir: string, port: number, cwd = root): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_LAGOON_NODE_ARGS?.split(' ').filter(Boolean) ?? ['--import', 'tsx']),
      process.env.BENCH_LAGOON_ENTRY ?? 'src/main.ts',
    ],
    {
      cwd,
      env: {
        ...process.env,
        PORT: String(port),
        LAGOON_CONFIG: configPath,
        LAGOON_DATA_DIR: dataDir,
        LAGOON_BOOTSTRAP_ADMIN_KEY: ADMIN,
        LOG_LEVEL: 'warn',
        LAGOON_JOB_WORKERS: 'false',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('Lagoon ')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`Lagoon exited with ${code}`)));
  });
}

/** CPU time (user + system) a process has used so far, in ms (/proc/<pid>/stat, clock ticks of 10 ms). */
const cpuMs = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

async function timed(pool: Pool, path: string, body: string, headers: Record<string, string>): Promise<number> {
  const start = performance.now();
  const response = await pool.request({ path, method: 'POST', headers, body });
  await response.body.arrayBuffer();
  if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode} from ${path}`);
  return performance.now() - start;
}

async function main() {
  const load = loadavg().map((value) => value.toFixed(2));
  const upstream = await startUpstream();
  const dir = mkdtempSync(join(tmpdir(), 'lagoon-bench-embeddings-'));
  const configPath = join(dir, 'operator.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      providers: [{ id: 'bench-up', type: 'openai-compatible', baseUrl: `${upstream.url}/v1`, maxRetries: 0 }],
      models: [
        {
          id: 'bench-upstream-embedding',
          type: 'embedding',
          name: 'Bench upstream',
          pricing: { input: { usd: 0.01 }, output: { usd: 0.01 } },
          spec: { embeddingDimensions: DIMENSIONS, maxInputTokens: 8192, supportsCustomDimensions: false },
          providers: [{ id: 'bench-up', upstreamModel: 'bge-m3' }],
        },
      ],
    }),
  );
  const port = 18_000 + Math.floor(Math.random() * 2_000);
  // This checkout's Lagoon, and with BENCH_COMPARE_ROOT another build beside it (its own data directory).
  const roots = [root, ...(process.env.BENCH_COMPARE_ROOT ? [process.env.BENCH_COMPARE_ROOT] : [])];
  const builds: { root: string; child: ChildProcess; pool: Pool; cpu: number; through: number[] }[] = [];
  try {
    for (const [n, buildRoot] of roots.entries()) {
      const dataDir = join(dir, `data-${n}`);
      const child = await startLagoon(configPath, dataDir, port + n, buildRoot);
      builds.push({
        root: buildRoot,
        child,
        pool: new Pool(`http://127.0.0.1:${port + n}`, { connections: 1 }),
        cpu: 0,
        through: [],
      });
      const env = { ...process.env, LAGOON_DATA_DIR: dataDir };
      await creditAdmin({ root, adminKey: ADMIN, usd: '1000', env, stdio: 'ignore' });
    }
    const lagoonPool = builds[0]!.pool;
    const upstreamPool = new Pool(upstream.url, { connections: 1 });
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` };
    console.log(`load average at start: ${load.join(' ')}; ${REQUESTS} requests per side and format, batch ${BATCH}`);
    console.log(
      '| encoding | direct p50 / p99 ms | through Lagoon p50 / p99 ms | added p50 / p99 ms | Lagoon CPU ms per request |',
    );
    console.log('|---|---:|---:|---:|---:|');
    const formats = (process.env.BENCH_FORMATS ?? 'base64,float').split(',') as ('base64' | 'float')[];
    const signal = () => {
      // BENCH_SIGNAL=1: SIGUSR2 to Lagoon around the measured run (a preloaded profiler starts and stops on it).
      if (process.env.BENCH_SIGNAL) for (const build of builds) process.kill(build.child.pid!, 'SIGUSR2');
    };
    for (const format of formats) {
      const body = (model: string) => JSON.stringify({ model, input: inputs, encoding_format: format });
      const throughLagoon = async (build: (typeof builds)[number]) => {
        const cpuBefore = cpuMs(build.child.pid!);
        build.through.push(await timed(build.pool, '/api/v1/embeddings', body('bench-upstream-embedding'), headers));
        build.cpu += cpuMs(build.child.pid!) - cpuBefore;
      };
      // Warm up until V8 has compiled what the path runs (its compiler threads stay busy ~40 s under this load).
      for (const warmUntil = performance.now() + WARMUP_MS; performance.now() < warmUntil;) {
        for (const build of builds)
          await timed(build.pool, '/api/v1/embeddings', body('bench-upstream-embedding'), headers);
        await timed(upstreamPool, '/v1/embeddings', body('bge-m3'), headers);
      }
      const direct: number[] = [];
      for (const build of builds) [build.cpu, build.through] = [0, []];
      signal();
      for (let i = 0; i < REQUESTS; i += 1) {
        direct.push(await timed(upstreamPool, '/v1/embeddings', body('bge-m3'), headers));
        for (const build of i % 2 === 0 ? builds : [...builds].reverse()) await throughLagoon(build);
      }
      signal();
      direct.sort((a, b) => a - b);
      const f = (value: number) => value.toFixed(2);
      const [d50, d99] = [quantile(direct, 0.5), quantile(direct, 0.99)];
      for (const build of builds) {
        const through = build.through.sort((a, b) => a - b);
        const [t50, t99] = [quantile(through, 0.5), quantile(through, 0.99)];
        const label = builds.length > 1 ? ` (${build.root})` : '';
        console.log(
          `| ${format}${label} | ${f(d50)} / ${f(d99)} | ${f(t50)} / ${f(t99)} | **${f(t50 - d50)} / ${f(t99 - d99)}** | ${f(build.cpu / REQUESTS)} |`,
        );
      }
    }
    // The simulator engine alone, in this process.
    const engine = new SimulatorEmbeddingEngine('bench');
    const started = performance.now();
    let embedded = 0;
    while (performance.now() - started < 3_000) {
      await engine.embed('x', { inputs, nativeDimensions: DIMENSIONS, preferred: 'float' });
      embedded += BATCH;
    }
    const inProcess = (embedded / (performance.now() - started)) * 1000;
    // And over HTTP through Lagoon (auth, hold, settle, JSON), base64, one request at a time.
    const httpStarted = performance.now();
    let httpEmbedded = 0;
    const simBody = JSON.stringify({ model: 'lagoon-sim-embedding', input: inputs, encoding_format: 'base64' });
    while (performance.now() - httpStarted < 3_000) {
      await timed(lagoonPool, '/api/v1/embeddings', simBody, headers);
      httpEmbedded += BATCH;
    }
    const overHttp = (httpEmbedded / (performance.now() - httpStarted)) * 1000;
    console.log(
      `simulator engine (1024 dims, ~15-word inputs): ${Math.round(inProcess)} inputs/s in process; ` +
        `${Math.round(overHttp)} inputs/s over HTTP through Lagoon (batches of ${BATCH}, one at a time)`,
    );
    await Promise.all([...builds.map((build) => build.pool.close()), upstreamPool.close()]);
  } finally {
    for (const { child } of builds) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    upstream.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--serve-upstream')) {
  const { url } = await serveUpstream();
  process.stdout.write(`upstream ${url}\n`);
} else await main();
