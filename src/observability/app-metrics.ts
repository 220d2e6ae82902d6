import type { Currency, Nano } from '../billing/money.ts';
import type { Usage } from '../billing/billing.types.ts';
import type { UpstreamMetrics } from '../providers/upstream-pool.ts';

/** Where the money core reports (src/metrics.ts implements it). Every method is a few additions: no I/O. */
export interface BillingMetrics {
  /** A call settled: its usage and what it was charged, in the reservation's currency. */
  observeSettlement(usage: Usage, currency: Currency, charged: Nano): void;
  /** A call refused before it ran: a balance, a key's spend limit, a rate limit (the error's code). */
  observeRefusal(code: string): void;
  /** A hold opened (+1) or ended (-1: settled, released, swept) in this process. */
  observeHolds(change: number): void;
  /** One group-commit batch of the billing writer: its calls, its lease updates, how long it took, whether it wrote. */
  observeBillingBatch(calls: number, leaseUpdates: number, seconds: number, ok: boolean): void;
}

/** Where queued jobs report (src/media/jobs/job-runner.ts). */
export interface JobMetrics {
  /** A worker took a job: how long it waited in the queue. */
  observeJobStart(model: string, waitSeconds: number): void;
  /** A run ended (completed, failed, retried): how long it ran. */
  observeJobEnd(model: string, outcome: string, runSeconds: number): void;
}

/** Where wallet top-ups report (src/wallets/top-up.service.ts). */
export interface TopUpMetrics {
  observeTopUp(outcome: string): void;
}

/** Everything the services report to; the app's Prometheus metrics (src/metrics.ts) implement it. */
export interface AppMetrics extends UpstreamMetrics, BillingMetrics, JobMetrics, TopUpMetrics {}
