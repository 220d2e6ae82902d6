/** A fixed-concurrency load loop: `connections` workers send requests back to back for `seconds`. */
export interface LoadResult {
  readonly requests: number;
  readonly errors: number;
  readonly rps: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
}

export async function runLoad(
  send: () => Promise<boolean>,
  options: { connections: number; seconds: number; warmupSeconds?: number },
): Promise<LoadResult> {
  const run = async (seconds: number, record: boolean) => {
    const latencies: number[] = [];
    let errors = 0;
    const until = performance.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: options.connections }, async () => {
        while (performance.now() < until) {
          const started = performance.now();
          const ok = await send().catch(() => false);
          if (!record) continue;
          latencies.push(performance.now() - started);
          if (!ok) errors += 1;
        }
      }),
    );
    return { latencies, errors };
  };
  await run(options.warmupSeconds ?? 1, false);
  const { latencies, errors } = await run(options.seconds, true);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0);
  return {
    requests: latencies.length,
    errors,
    rps: Math.round(latencies.length / options.seconds),
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
  };
}

const round = (ms: number) => Math.round(ms * 100) / 100;
