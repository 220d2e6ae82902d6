import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Usage } from '../billing/billing.types.ts';
import type { Currency, Nano } from '../billing/money.ts';
import type { BillingMetrics, JobMetrics, TopUpMetrics } from './app-metrics.ts';
import { UsageTally, usdOfNano } from './usage-tally.ts';

/** The label of a model id the catalog does not list (or of none): model ids never grow the label set unbounded. */
export const OTHER = 'other';

/** Queued jobs per model, read when `/metrics` is scraped. */
export type QueueDepthSource = () => Promise<readonly { model: string; depth: number }[]>;

/**
 * The metrics of what Lagoon sells and holds: tokens, units and spend by model and provider, holds, billing batches,
 * refusals, jobs and wallet top-ups (docs/operations.md, Metrics). Usage is tallied in plain numbers on the hot path
 * and turned into counters when scraped.
 */
export class BusinessMetrics implements BillingMetrics, JobMetrics, TopUpMetrics {
  private readonly tally = new UsageTally();
  private knownModels: ReadonlySet<string> = new Set();
  /** What the gauges read when scraped. */
  private readonly state: GaugeState = { holdsOpen: 0, queueDepth: undefined, model: (id) => this.model(id) };

  private readonly refusals: Counter<'code'>;
  private readonly batches: Counter<'outcome'>;
  private readonly batchSeconds: Histogram;
  private readonly batchCalls: Histogram;
  private readonly leaseUpdates: Counter;
  private readonly jobWait: Histogram<'model'>;
  private readonly jobRun: Histogram<'model' | 'outcome'>;
  private readonly topUps: Counter<'outcome'>;

  constructor(registry: Registry) {
    const registers = [registry];
    registerUsageCounters(registers, this.tally);
    registerGauges(registers, this.state);
    this.refusals = new Counter({
      name: 'lagoon_refusals_total',
      help: 'Calls refused before they ran, by error code (balance, key spend limit, rate limit).',
      labelNames: ['code'] as const,
      registers,
    });
    this.batches = new Counter({
      name: 'lagoon_billing_batches_total',
      help: 'Billing write batches (group commit of holds, settlements and lease updates) by outcome.',
      labelNames: ['outcome'] as const,
      registers,
    });
    this.batchSeconds = new Histogram({
      name: 'lagoon_billing_batch_write_seconds',
      help: 'How long one billing write batch took (its transaction, retries included).',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    this.batchCalls = new Histogram({
      name: 'lagoon_billing_batch_size',
      help: 'Items (calls and lease updates) per billing write batch.',
      buckets: [1, 2, 4, 8, 16, 32, 64],
      registers,
    });
    this.leaseUpdates = new Counter({
      name: 'lagoon_lease_updates_total',
      help: 'Balance lease updates written (their settled charges, growth and expiry).',
      registers,
    });
    this.jobWait = new Histogram({
      name: 'lagoon_job_wait_seconds',
      help: 'How long a job waited in the queue before a worker took it, by model.',
      labelNames: ['model'] as const,
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600],
      registers,
    });
    this.jobRun = new Histogram({
      name: 'lagoon_job_run_seconds',
      help: 'How long a job run took, by model and outcome (completed, failed, retry).',
      labelNames: ['model', 'outcome'] as const,
      buckets: [0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600],
      registers,
    });
    this.topUps = new Counter({
      name: 'lagoon_wallet_topups_total',
      help: 'Wallet top-ups (x402 payments) by outcome.',
      labelNames: ['outcome'] as const,
      registers,
    });
  }

  /** The model ids the catalog lists: any other id is counted as `other`. */
  setModels(ids: Iterable<string>): void {
    this.knownModels = new Set(ids);
  }

  setQueueDepthSource(source: QueueDepthSource): void {
    this.state.queueDepth = source;
  }

  model(id: string | undefined): string {
    return id !== undefined && this.knownModels.has(id) ? id : OTHER;
  }

  observeSettlement(usage: Usage, currency: Currency, charged: Nano): void {
    const totals = this.tally.totals(this.model(usage.modelId), usage.providerId ?? OTHER);
    totals.calls += 1;
    totals.tokensIn += usage.inferenceDetails?.promptTokens ?? 0;
    totals.tokensOut += usage.inferenceDetails?.completionTokens ?? 0;
    totals.spendNano += usdCharged(usage, currency, charged);
    for (const line of usage.lines) {
      const type = line.lineType ?? usage.unitType ?? 'units';
      totals.units.set(type, (totals.units.get(type) ?? 0) + Number(line.units));
    }
  }

  observeRefusal(code: string): void {
    this.refusals.inc({ code });
  }

  observeHolds(change: number): void {
    this.state.holdsOpen += change;
  }

  observeBillingBatch(calls: number, leaseUpdates: number, seconds: number, ok: boolean): void {
    this.batches.inc({ outcome: ok ? 'ok' : 'failed' });
    this.batchSeconds.observe(seconds);
    this.batchCalls.observe(calls + leaseUpdates);
    if (leaseUpdates > 0) this.leaseUpdates.inc(leaseUpdates);
  }

  observeJobStart(model: string, waitSeconds: number): void {
    this.jobWait.observe({ model: this.model(model) }, waitSeconds);
  }

  observeJobEnd(model: string, outcome: string, runSeconds: number): void {
    this.jobRun.observe({ model: this.model(model), outcome }, runSeconds);
  }

  observeTopUp(outcome: string): void {
    this.topUps.inc({ outcome });
  }
}

interface GaugeState {
  holdsOpen: number;
  queueDepth: QueueDepthSource | undefined;
  readonly model: (id: string) => string;
}

/** The counters derived from the usage tally when scraped. */
function registerUsageCounters(registers: Registry[], tally: UsageTally): void {
  const byModel = ['model', 'provider'] as const;
  new Counter({
    name: 'lagoon_tokens_total',
    help: 'Tokens billed by model, provider and direction (in: prompt, out: completion).',
    labelNames: [...byModel, 'direction'] as const,
    registers,
    collect() {
      this.reset();
      for (const { model, provider, totals } of tally.entries()) {
        this.inc({ model, provider, direction: 'in' }, totals.tokensIn);
        this.inc({ model, provider, direction: 'out' }, totals.tokensOut);
      }
    },
  });
  new Counter({
    name: 'lagoon_usage_units_total',
    help: 'Units billed by model, provider and usage line type (the units of the usage entries).',
    labelNames: [...byModel, 'type'] as const,
    registers,
    collect() {
      this.reset();
      for (const { model, provider, totals } of tally.entries())
        for (const [type, units] of totals.units) this.inc({ model, provider, type }, units);
    },
  });
  new Counter({
    name: 'lagoon_spend_usd_total',
    help: 'What settled calls were charged, in USD (DIEM charges at their USD list price), by model and provider.',
    labelNames: byModel,
    registers,
    collect() {
      this.reset();
      for (const { model, provider, totals } of tally.entries())
        this.inc({ model, provider }, usdOfNano(totals.spendNano));
    },
  });
  new Counter({
    name: 'lagoon_paid_calls_total',
    help: 'Settled paid calls by model and provider.',
    labelNames: byModel,
    registers,
    collect() {
      this.reset();
      for (const { model, provider, totals } of tally.entries()) this.inc({ model, provider }, totals.calls);
    },
  });
}

/** The gauges read when scraped: holds open in this process, and the job queue's depth per model. */
function registerGauges(registers: Registry[], state: GaugeState): void {
  new Gauge({
    name: 'lagoon_holds_open',
    help: 'Holds (reservations) this process opened and that have not ended yet; sum over processes.',
    registers,
    collect() {
      this.set(state.holdsOpen);
    },
  });
  new Gauge({
    name: 'lagoon_job_queue_depth',
    help: 'Jobs queued and not started, by model (read from the database when scraped).',
    labelNames: ['model'] as const,
    registers,
    async collect() {
      this.reset();
      for (const { model, depth } of (await state.queueDepth?.()) ?? []) this.inc({ model: state.model(model) }, depth);
    },
  });
}

/**
 * A charge in USD nano: as charged for USD and credits; for DIEM (and VCU) the USD list price of the same lines,
 * scaled by the share of their DIEM price that was charged (a charge capped at its hold).
 */
function usdCharged(usage: Usage, currency: Currency, charged: Nano): Nano {
  if (currency === 'USD' || currency === 'BUNDLED_CREDITS') return charged;
  let usd = 0n;
  let diem = 0n;
  for (const line of usage.lines) {
    usd += line.cost.usd;
    diem += line.cost.diem;
  }
  return diem === 0n ? 0n : (usd * charged) / diem;
}
