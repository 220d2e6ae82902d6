import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { freePort } from '../test/helpers/free-port.ts';

/*
 * Start-up: spawns `node dist/main.js` (what `npm start` runs after its build) N times and measures the time to the
 * first 200 from /healthz, and the CPU time the process had used by then (user + system, all threads, from
 * /proc/<pid>/stat: less sensitive to a loaded host than the wall time). PostgreSQL: a fresh database on the
 * server each run; embedded: a fresh data directory each run (the first start, which creates the database). With
 * --restart, the usual restart instead: one database (or data directory) migrated by an unmeasured first start,
 * then every run starts on it again.
 *
 *   npm run bench:startup -- [--runs 5] [--mode postgres|embedded|both] [--restart] [--root <checkout>] \
 *     [--admin-url postgres://postgres@127.0.0.1:5432/postgres]
 *
 * --root runs another checkout's build (built there first with `npm run build`), for a side-by-side comparison.
 */

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    mode: { type: 'string', default: 'both' },
    restart: { type: 'boolean', default: false },
    root: { type: 'string', default: process.cwd() },
    'admin-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    'timeout-seconds': { type: 'string', default: '120' },
  },
});
const RUNS = Number(values.runs);
const ROOT = resolve(values.root);
const ADMIN_URL = values['admin-url'];
const TIMEOUT_MS = Number(values['timeout-seconds']) * 1000;
const CLOCK_TICKS_PER_SECOND = 100;

interface Sample {
  readonly wallMs: number;
  readonly cpuMs: number;
}

/** CPU time (user + system, every thread) the process has used so far. */
function cpuMsOf(pid: number): number {
  // Fields after the command name (which may hold spaces, hence from the last ')'): utime and stime are 14 and 15.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
}

async function startOnce(env: Record<string, string>): Promise<Sample> {
  const port = await freePort();
  const { DATABASE_URL: _url, LAGOON_DATA_DIR: _dir, ...rest } = process.env;
  const started = performance.now();
  const child = spawn(process.execPath, ['dist/main.js'], {
    cwd: ROOT,
    env: { ...rest, NODE_ENV: 'production', HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}): ${stderr}`);
      if (performance.now() - started > TIMEOUT_MS) throw new Error(`no /healthz within ${TIMEOUT_MS} ms: ${stderr}`);
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (response) => response.ok,
        () => false,
      );
      if (ok) break;
      await new Promise((done) => setTimeout(done, 10));
    }
    const wallMs = performance.now() - started;
    return { wallMs, cpuMs: cpuMsOf(child.pid ?? 0) };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

async function admin(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** Where a run's server keeps its data (its environment), made before the runs and removed after them. */
interface Store {
  readonly env: Record<string, string>;
  remove(): Promise<void>;
}

async function postgresStore(): Promise<Store> {
  const name = `lagoon_bench_startup_${randomBytes(5).toString('hex')}`;
  await admin(`create database ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return { env: { DATABASE_URL: url.toString() }, remove: () => admin(`drop database if exists ${name} with (force)`) };
}

async function embeddedStore(): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), 'lagoon-bench-startup-'));
  return {
    env: { LAGOON_DATA_DIR: join(dir, 'data') },
    remove: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** RUNS first starts, each on a new store; or with --restart, RUNS restarts on one store a first start migrated. */
async function measure(makeStore: () => Promise<Store>, report: (sample: Sample, index: number) => void) {
  const samples: Sample[] = [];
  const shared = values.restart ? await makeStore() : undefined;
  try {
    if (shared) await startOnce(shared.env);
    for (let i = 0; i < RUNS; i++) {
      const store = shared ?? (await makeStore());
      try {
        samples.push(await startOnce(store.env));
      } finally {
        if (!shared) await store.remove();
      }
      report(samples[i]!, i);
    }
  } finally {
    await shared?.remove();
  }
  return samples;
}

function summary(samples: readonly Sample[], key: keyof Sample): string {
  const sorted = samples.map((sample) => sample[key]).sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
  const seconds = (ms: number) => (ms / 1000).toFixed(2);
  return `median ${seconds(median)} s (min ${seconds(sorted[0] ?? 0)}, max ${seconds(sorted.at(-1) ?? 0)})`;
}

const modes = values.mode === 'both' ? ['postgres', 'embedded'] : [values.mode];
const what = values.restart ? 'restarts on a migrated database' : 'first starts on a new database';
console.log(`start-up of ${join(ROOT, 'dist/main.js')}, ${RUNS} ${what} each`);
for (const mode of modes) {
  const makeStore = mode === 'postgres' ? postgresStore : mode === 'embedded' ? embeddedStore : undefined;
  if (!makeStore) throw new Error(`unknown --mode ${mode} (postgres, embedded or both)`);
  const label = values.restart ? `${mode} restart` : mode;
  const samples = await measure(makeStore, (sample, i) =>
    console.log(
      `  ${label} #${i + 1}: /healthz after ${sample.wallMs.toFixed(0)} ms, CPU ${sample.cpuMs.toFixed(0)} ms`,
    ),
  );
  console.log(`${label}: time to /healthz ${summary(samples, 'wallMs')}; CPU ${summary(samples, 'cpuMs')}`);
}
