import { operator } from '../src/auth/auth-context.ts';
import type { AccountAuthContext } from '../src/auth/auth-context.ts';
import { createRedisClient } from '../src/events/redis.ts';
import { createLogger } from '../src/logger.ts';
import type { BreachLog } from '../src/rate-limits/breach-log.ts';
import { RateLimitsConfigSchema } from '../src/rate-limits/limits.ts';
import { RateLimiter } from '../src/rate-limits/rate-limiter.ts';

/**
 * The added cost of RateLimiter.admit() per chat call (src/rate-limits): RPM, RPD and TPM counted for one key and
 * model, with the built-in (never reached) limits, as chat.service.ts calls it before the hold. Measured on its own,
 * in process memory and in Redis (REDIS_URL), one call at a time (latency) and 32 at a time (throughput; the three
 * counters of a call go out side by side). Usage:
 *   node --import tsx bench/rate-limits.ts                                  # memory only
 *   REDIS_URL=redis://127.0.0.1:6379 node --import tsx bench/rate-limits.ts # memory and Redis
 * BENCH_CALLS (default 20000) calls per run; each run is warmed with a tenth of that first.
 */
const CALLS = Number(process.env.BENCH_CALLS ?? 20_000);
const logger = createLogger('silent');
// No call is refused at the built-in limits, so the breach log is never written.
const noLog = { record: async () => undefined, recent: async () => [] } as unknown as BreachLog;
const auth: AccountAuthContext = {
  kind: 'apiKey',
  requestId: operator().requestId,
  accountId: '00000000-0000-4000-8000-000000000001',
  apiKey: {
    id: `00000000-0000-4000-8000-${String(Date.now()).padStart(12, '0').slice(-12)}`,
    accountId: '00000000-0000-4000-8000-000000000001',
    type: 'INFERENCE',
    limitPeriod: 'EPOCH',
    modelPrivacy: 'ALL',
    limits: { usd: null, diem: null },
    expiresAt: null,
  },
};
const model = { id: 'lagoon-sim-chat', type: 'text' as const };

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

async function run(limiter: RateLimiter, concurrency: number, calls: number) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < calls) {
        next += 1;
        const t0 = performance.now();
        const admission = await limiter.admit(auth, model, 120);
        admission.recordTokens(40);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), perSecond: calls / seconds };
}

const rows: string[] = [];
const stores: [string, RateLimiter][] = [
  ['memory', new RateLimiter({ config: RateLimitsConfigSchema.parse({}), log: noLog, logger })],
];
if (process.env.REDIS_URL)
  stores.push([
    'Redis',
    new RateLimiter({
      config: RateLimitsConfigSchema.parse({}),
      log: noLog,
      logger,
      redis: createRedisClient(process.env.REDIS_URL, logger, 'bench-rate-limits', { commandTimeoutMs: 500 }),
    }),
  ]);
for (const [name, limiter] of stores) {
  for (const concurrency of [1, 32]) {
    await run(limiter, concurrency, Math.ceil(CALLS / 10));
    const result = await run(limiter, concurrency, CALLS);
    rows.push(
      `| ${name} | ${concurrency} | ${(result.p50 * 1000).toFixed(0)} / ${(result.p99 * 1000).toFixed(0)} | ${Math.round(result.perSecond)} |`,
    );
  }
  await limiter.close();
}
console.log(`admit() + recordTokens(), ${CALLS} calls per run, one key and model\n`);
console.log('| counters | calls at once | latency p50 / p99 (µs) | calls/s |');
console.log('|---|---|---|---|');
console.log(rows.join('\n'));
