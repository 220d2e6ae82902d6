import { spawn } from 'node:child_process';
import { buildServer } from '../build.ts';

/**
 * BENCH_COMPARE_ROOT=<another checkout>: the benchmarks that honour it run that build beside this one and send
 * each measured request to both, in turn, so two builds are compared under the same load and drift (a busy shared
 * host moves latency by more than most changes do; runs one after the other cannot tell the two apart).
 */
export interface BuildRoot {
  /** How the tables name it: `this` or the other checkout's path. */
  readonly label: string;
  readonly root: string;
}

/** This checkout first, then BENCH_COMPARE_ROOT when set. */
export function buildRoots(root: string): BuildRoot[] {
  const other = process.env.BENCH_COMPARE_ROOT;
  return [{ label: 'this', root }, ...(other ? [{ label: other, root: other }] : [])];
}

/** Builds the server of `build` (dist/main.js) as `npm start` does: this checkout in process, another with its own build.ts. */
export async function buildAt(build: BuildRoot, root: string): Promise<void> {
  if (build.root === root) return buildServer();
  const child = spawn(process.execPath, ['--import', 'tsx', 'build.ts'], { cwd: build.root, stdio: 'inherit' });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`building ${build.root} failed (exit ${code})`);
}

/**
 * The environment of the n-th build: its own data directory, and on PostgreSQL its own database (the two builds'
 * migrations differ): BENCH_COMPARE_DATABASE_URL for the other build, required when DATABASE_URL is set.
 */
export function buildEnv(env: NodeJS.ProcessEnv, n: number, dataDir: string): NodeJS.ProcessEnv {
  if (n === 0) return { ...env, LAGOON_DATA_DIR: dataDir };
  if (env.DATABASE_URL && !env.BENCH_COMPARE_DATABASE_URL)
    throw new Error('DATABASE_URL is set: give the compared build a database of its own in BENCH_COMPARE_DATABASE_URL');
  const { DATABASE_URL: _shared, ...rest } = env;
  return {
    ...rest,
    LAGOON_DATA_DIR: dataDir,
    ...(env.BENCH_COMPARE_DATABASE_URL && { DATABASE_URL: env.BENCH_COMPARE_DATABASE_URL }),
  };
}
