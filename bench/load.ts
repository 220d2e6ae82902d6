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
  return (await runLoadSides([send], options))[0]!;
}

/**
 * The same loop against several targets side by side (two builds of Lagoon, say): each worker sends one request to
 * every target in turn, the order rotated each time, so load and drift on the host hit them alike; one result each.
 */
export async function runLoadSides(
  sends: readonly (() => Promise<boolean>)[],
  options: { connections: number; seconds: number; warmupSeconds?: number },
): Promise<LoadResult[]> {
  const run = async (seconds: number, record: boolean) => {
    const sides = sends.map(() => ({ latencies: [] as number[], errors: 0 }));
    const until = performance.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: options.connections }, async (_, worker) => {
        for (let turn = worker; performance.now() < until; turn += 1) {
          for (let k = 0; k < sends.length; k += 1) {
            const n = (turn + k) % sends.length;
            const started = performance.now();
            const ok = await sends[n]!().catch(() => false);
            if (!record) continue;
            sides[n]!.latencies.push(performance.now() - started);
            if (!ok) sides[n]!.errors += 1;
          }
        }
      }),
    );
    return sides;
  };
  await run(options.warmupSeconds ?? 1, false);
  return (await run(options.seconds, true)).map(({ latencies, errors }) => {
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
  });
}

const round = (ms: number) => Math.round(ms * 100) / 100;
