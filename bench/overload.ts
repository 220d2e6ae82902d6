import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { buildServer, SERVER_ENTRY } from '../build.ts';
import { creditAdmin } from './credit.ts';
import { openLoop, quantiles, type OpenLoopTarget } from './open-loop.ts';

/**
 * LAGOON_MAX_IN_FLIGHT under overload (`npm run bench:overload`): chat completions against the 20 ms upstream
 * (bench/chat-upstream.ts), open loop. (1) the unloaded p99 at BENCH_BASE_RATE (default 20/s); (2) the sustainable
 * rate: BENCH_RATES (default 50,100,200,400,800) stepped up until fewer than 95 % complete within the run or the
 * p99 passes 10× the unloaded one; (3) twice that rate offered to Lagoon with the limit on (BENCH_LIMIT, default 64)
 * and then with it off (0): the admitted calls' p50/p99 against the unloaded p99, and how many were refused.
 * BENCH_SECONDS (default 10) per run. Lagoon runs as `npm start` does (dist/main.js), on PGlite.
 */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const BASE_RATE = Number(process.env.BENCH_BASE_RATE ?? 20);
const RATES = (process.env.BENCH_RATES ?? '50,100,200,400,800').split(',').map(Number);
const LIMIT = Number(process.env.BENCH_LIMIT ?? 64);
const ADMIN = 'bench-overload-admin-key-0123456789';
const root = new URL('..', import.meta.url).pathname;
const children: ChildProcess[] = [];

function start(args: string[], env: NodeJS.ProcessEnv, ready: RegExp): Promise<RegExpMatchArray> {
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let started = false;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = started ? null : line.match(ready);
      if (match) {
        started = true;
        resolve(match);
      }
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
}

try {
  const load = loadavg().map((value) => value.toFixed(2));
  const upstream = await start(['--import', 'tsx', 'bench/chat-upstream.ts', '20'], process.env, /^ready (\d+)/);
  const dir = mkdtempSync(join(tmpdir(), 'lagoon-overload-bench-'));
  const configPath = join(dir, 'operator.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      providers: [
        { id: 'up', type: 'openai-compatible', baseUrl: `http://127.0.0.1:${upstream[1]}/v1`, timeoutMs: 120_000 },
      ],
      models: [
        {
          id: 'bench-model',
          name: 'Bench',
          type: 'text',
          provider: 'up',
          upstreamModel: 'bench',
          pricing: { input: { usd: 0.1 }, output: { usd: 0.2 } },
        },
      ],
    }),
  );
  await buildServer();
  /** One Lagoon with the given limit, its own data directory, credited. */
  const lagoon = async (limit: number) => {
    const env = {
      ...process.env,
      PORT: '0',
      LOG_LEVEL: 'warn',
      LAGOON_CONFIG: configPath,
      LAGOON_BOOTSTRAP_ADMIN_KEY: ADMIN,
      LAGOON_DATA_DIR: join(dir, `data-${limit}`),
      LAGOON_MAX_IN_FLIGHT: String(limit),
    };
    const match = await start([SERVER_ENTRY], env, /on (http:\/\/127\.0\.0\.1:\d+)/);
    await creditAdmin({ root, adminKey: ADMIN, usd: '1000000', env, stdio: 'ignore' });
    const target: OpenLoopTarget = {
      origin: match[1]!,
      path: '/api/v1/chat/completions',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
      body: JSON.stringify({ model: 'bench-model', max_tokens: 64, messages: [{ role: 'user', content: 'Hi.' }] }),
    };
    return target;
  };
  const limited = await lagoon(LIMIT);
  await openLoop(limited, { rate: BASE_RATE, seconds: 3 }); // warm-up
  const base = await openLoop(limited, { rate: BASE_RATE, seconds: SECONDS });
  console.log(
    `load average at start: ${load.join(' ')}; ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, PGlite`,
  );
  console.log(`unloaded (${BASE_RATE}/s): p50 ${base.p50} ms, p99 ${base.p99} ms\n`);
  console.log(
    '| offered req/s | limit | completed/s | admitted (200) | refused / failed | admitted p50 / p99 ms | admitted p99 ÷ unloaded p99 |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|');
  const row = (limit: number, r: Awaited<ReturnType<typeof openLoop>>) => {
    const ok = quantiles(r.okLatencies);
    console.log(
      `| ${r.rate} | ${limit || 'off'} | ${r.achievedRps} | ${r.okLatencies.length} | ${r.errors} | ${ok.p50} / ${ok.p99} | ${(ok.p99 / base.p99).toFixed(2)} |`,
    );
  };
  let sustainable = 0;
  for (const rate of RATES) {
    const r = await openLoop(limited, { rate, seconds: SECONDS });
    row(LIMIT, r);
    if (r.okLatencies.length < 0.95 * r.sent || r.p99 > 10 * base.p99) break;
    sustainable = rate;
  }
  if (sustainable === 0) sustainable = RATES[0]!;
  console.log(`\nsustainable: ${sustainable}/s; offered twice that:\n`);
  row(LIMIT, await openLoop(limited, { rate: 2 * sustainable, seconds: SECONDS }));
  const unlimited = await lagoon(0);
  await openLoop(unlimited, { rate: BASE_RATE, seconds: 3 });
  row(0, await openLoop(unlimited, { rate: 2 * sustainable, seconds: SECONDS }));
} finally {
  for (const child of children) child.kill('SIGTERM');
}
