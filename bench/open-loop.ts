import { Pool } from 'undici';

/**
 * An open-loop load generator: requests are scheduled at a fixed rate whatever the server does, and each
 * latency is measured from the request's scheduled time (so a stalled server cannot hide its queueing, the
 * "coordinated omission" that closed-loop tools suffer). One undici pool with many keep-alive connections.
 */
export interface OpenLoopResult {
  readonly rate: number;
  readonly sent: number;
  readonly errors: number;
  /** Completed requests per second over the run. */
  readonly achievedRps: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  /** Every completed request's latency (ms from its scheduled send), for pooling rounds. */
  readonly latencies: readonly number[];
  /** The latencies of the requests answered 200 only (bench/overload.ts: the admitted calls). */
  readonly okLatencies: readonly number[];
  /** Streaming only: time to the first body byte. */
  readonly ttfbP50?: number;
  readonly ttfbP99?: number;
}

export interface OpenLoopTarget {
  readonly origin: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly stream?: boolean;
}

export async function openLoop(
  target: OpenLoopTarget,
  options: { rate: number; seconds: number; connections?: number },
): Promise<OpenLoopResult> {
  return (await openLoopSides([target], options))[0]!;
}

/**
 * The same schedule sent to several targets side by side (two builds of Lagoon, say): at each scheduled time one
 * request goes to every target, the order rotated each time, so load and drift on the host hit them alike. Each
 * target gets the full rate on its own pool and its own result.
 */
export async function openLoopSides(
  targets: readonly OpenLoopTarget[],
  options: { rate: number; seconds: number; connections?: number },
): Promise<OpenLoopResult[]> {
  const sides = targets.map((target) => side(target, options.connections ?? 512));
  const total = Math.round(options.rate * options.seconds);
  const interval = 1000 / options.rate;
  const inFlight: Promise<void>[] = [];
  const start = performance.now() + 20;

  let next = 0;
  while (next < total) {
    const now = performance.now();
    // Fire everything that is due (timers are ~1 ms coarse; at 2,000 RPS several are due per tick).
    while (next < total && start + next * interval <= now) {
      for (let k = 0; k < sides.length; k += 1)
        inFlight.push(sides[(next + k) % sides.length]!.send(start + next * interval));
      next += 1;
    }
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, Math.min(1, start + next * interval - performance.now()))),
    );
  }
  await Promise.all(inFlight);
  const elapsed = (performance.now() - start) / 1000;
  return Promise.all(sides.map((one) => one.finish(options.rate, total, elapsed)));
}

/** One target's pool, its latencies and its failures. */
function side(target: OpenLoopTarget, connections: number) {
  const pool = new Pool(target.origin, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
  const latencies: number[] = [];
  const okLatencies: number[] = [];
  const firstBytes: number[] = [];
  let errors = 0;
  const reasons = new Map<string, number>();
  const failed = (reason: string) => {
    errors += 1;
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  };
  const send = async (scheduledAt: number) => {
    try {
      const response = await pool.request({
        method: 'POST',
        path: target.path,
        headers: target.headers,
        body: target.body,
      });
      let first = true;
      for await (const part of response.body) {
        if (first && (part as Buffer).length > 0) {
          firstBytes.push(performance.now() - scheduledAt);
          first = false;
        }
      }
      latencies.push(performance.now() - scheduledAt);
      if (response.statusCode !== 200) failed(`HTTP ${response.statusCode}`);
      else okLatencies.push(performance.now() - scheduledAt);
    } catch (error) {
      failed(error instanceof Error ? error.message : String(error));
    }
  };
  const finish = async (rate: number, sent: number, elapsed: number): Promise<OpenLoopResult> => {
    await pool.close();
    if (errors > 0)
      console.error(
        `${target.origin}${target.path} at ${rate}/s: ${[...reasons].map(([reason, count]) => `${count} × ${reason}`).join(', ')}`,
      );
    return {
      rate,
      sent,
      errors,
      achievedRps: Math.round(latencies.length / elapsed),
      ...quantiles(latencies),
      latencies,
      okLatencies,
      ...(target.stream && { ttfbP50: quantile(firstBytes, 0.5), ttfbP99: quantile(firstBytes, 0.99) }),
    };
  };
  return { send, finish };
}

export function quantiles(values: readonly number[]): { p50: number; p90: number; p99: number } {
  return { p50: quantile(values, 0.5), p90: quantile(values, 0.9), p99: quantile(values, 0.99) };
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const value = sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return Math.round(value * 100) / 100;
}
