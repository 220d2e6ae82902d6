import { availableParallelism, loadavg } from 'node:os';

/*
 * Tests never assume a quiet machine. Deadlines for work that takes real time (a server process starting, a
 * background write landing, a child program answering) stretch with the machine's load; assertions about speed
 * compare two measurements of the same run (`expectFasterThan`) instead of a fixed number of milliseconds.
 */

const MAX_SCALE = 8;

/**
 * How much longer than on a quiet machine a wait may take: LAGOON_TEST_TIME_SCALE when set, else the one-minute
 * load per core (a two-core host at load 8 gives 4), never under 1 nor over 8.
 */
export function timeScale(): number {
  const forced = Number(process.env.LAGOON_TEST_TIME_SCALE);
  if (Number.isFinite(forced) && forced > 0) return forced;
  const perCore = (loadavg()[0] ?? 0) / availableParallelism();
  return Math.min(MAX_SCALE, Math.max(1, perCore));
}

/** `ms` stretched by the machine's load now. */
export function scaled(ms: number): number {
  return Math.round(ms * timeScale());
}

/** The least of `times` runs of `measure` (a loaded machine may stall any single run, rarely all of them). */
export async function fastestOf(times: number, measure: () => Promise<number>): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let run = 0; run < times; run += 1) best = Math.min(best, await measure());
  return best;
}

/** Milliseconds that `work` takes. */
export async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}
