import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Usage } from './billing/billing.types.ts';
import type { Currency, Nano } from './billing/money.ts';
import type { AppMetrics } from './observability/app-metrics.ts';
import { BusinessMetrics, type QueueDepthSource } from './observability/business-metrics.ts';
import type { UpstreamOutcome } from './providers/upstream-pool.ts';

/** A failure's cause label: its error code when it starts with one (UPSTREAM_ERROR, ECONNREFUSED…), else the outcome. */
const CODE = /^[A-Z][A-Z0-9_]{1,39}(?=:|$)/;

/**
 * Prometheus metrics of one app instance (its own registry, so tests can build many apps): HTTP, upstreams, and
 * (observability/business-metrics.ts) usage, spend, holds, billing batches, refusals, jobs and top-ups.
 * docs/operations.md (Metrics) lists every family with its labels.
 */
export class Metrics implements AppMetrics {
  readonly registry = new Registry();
  private readonly business = new BusinessMetrics(this.registry);
  private readonly requests = new Counter({
    name: 'lagoon_http_requests_total',
    help: 'HTTP requests by route template (without the method), method and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'lagoon_http_request_duration_seconds',
    help: 'HTTP request latency (to the answer head; streams: to their first byte) by route, method and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  private readonly upstreamCalls = new Counter({
    name: 'lagoon_upstream_requests_total',
    help: 'Calls to upstream providers by provider id, operation and outcome (ok, timeout, error, rejected, cancelled, broken).',
    labelNames: ['provider', 'operation', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly upstreamLatency = new Histogram({
    name: 'lagoon_upstream_request_duration_seconds',
    help: 'Upstream latency to the answer (streams: to the first chunk) by provider id, operation and outcome.',
    labelNames: ['provider', 'operation', 'outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [this.registry],
  });
  private readonly firstByte = new Histogram({
    name: 'lagoon_upstream_time_to_first_byte_seconds',
    help: 'Time to the first chunk of a streamed upstream call that started, by provider id and operation.',
    labelNames: ['provider', 'operation'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  private readonly upstreamErrors = new Counter({
    name: 'lagoon_upstream_errors_total',
    help: 'Failed upstream calls by provider id, operation and cause (the error code, or timeout/rejected/broken).',
    labelNames: ['provider', 'operation', 'cause'] as const,
    registers: [this.registry],
  });
  private readonly fallbacks = new Counter({
    name: 'lagoon_upstream_fallbacks_total',
    help: 'Calls passed on to the next provider of a model, by the provider that failed and operation.',
    labelNames: ['provider', 'operation'] as const,
    registers: [this.registry],
  });
  private readonly cooldowns = new Counter({
    name: 'lagoon_upstream_cooldowns_total',
    help: 'Cooldowns started (a provider skipped after repeated failures), by provider id.',
    labelNames: ['provider'] as const,
    registers: [this.registry],
  });
  /** Until when each provider cools down (epoch ms), read by the gauge when scraped. */
  private readonly coolingUntil = new Map<string, number>();
  private modelSource: (() => Promise<readonly string[]>) | undefined;

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'lagoon_' });
    const coolingUntil = this.coolingUntil;
    new Gauge({
      name: 'lagoon_upstream_cooling_down',
      help: '1 while a provider is cooling down (skipped while another provider of the model is ready), else 0.',
      labelNames: ['provider'] as const,
      registers: [this.registry],
      collect() {
        const now = Date.now();
        for (const [provider, until] of coolingUntil) this.set({ provider }, until > now ? 1 : 0);
      },
    });
  }

  /** One upstream call; a mid-stream break is counted with outcome `broken` and no latency. */
  observeUpstream(provider: string, operation: string, outcome: UpstreamOutcome, seconds: number, failure?: string) {
    const labels = { provider, operation, outcome };
    this.upstreamCalls.inc(labels);
    if (outcome !== 'broken') this.upstreamLatency.observe(labels, seconds);
    if (outcome === 'ok') {
      if (operation.endsWith('_stream')) this.firstByte.observe({ provider, operation }, seconds);
    } else if (outcome !== 'cancelled') {
      const cause = (failure !== undefined && CODE.exec(failure)?.[0]) || outcome;
      this.upstreamErrors.inc({ provider, operation, cause });
    }
  }

  observeFallback(provider: string, operation: string): void {
    this.fallbacks.inc({ provider, operation });
  }

  observeCooldown(provider: string, until: number | null): void {
    if (until !== null) this.cooldowns.inc({ provider });
    this.coolingUntil.set(provider, until ?? 0);
  }

  /** One HTTP answer; `route` is the route template without the method (`/api/v1/chat/completions`). */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.requests.inc(labels);
    this.latency.observe(labels, seconds);
  }

  observeSettlement(usage: Usage, currency: Currency, charged: Nano): void {
    this.business.observeSettlement(usage, currency, charged);
  }

  observeRefusal(code: string): void {
    this.business.observeRefusal(code);
  }

  observeHolds(change: number): void {
    this.business.observeHolds(change);
  }

  observeBillingBatch(calls: number, leaseUpdates: number, seconds: number, ok: boolean): void {
    this.business.observeBillingBatch(calls, leaseUpdates, seconds, ok);
  }

  observeJobStart(model: string, waitSeconds: number): void {
    this.business.observeJobStart(model, waitSeconds);
  }

  observeJobEnd(model: string, outcome: string, runSeconds: number): void {
    this.business.observeJobEnd(model, outcome, runSeconds);
  }

  observeTopUp(outcome: string): void {
    this.business.observeTopUp(outcome);
  }

  /**
   * Where the catalog's model ids come from, for the `model` label: read now and at each scrape (an id it does not
   * list is counted as `other`, so callers' model names never grow the label set).
   */
  async setModelSource(source: () => Promise<readonly string[]>): Promise<void> {
    this.modelSource = source;
    await this.refreshModels();
  }

  private async refreshModels(): Promise<void> {
    if (this.modelSource) this.business.setModels(await this.modelSource());
  }

  setQueueDepthSource(source: QueueDepthSource): void {
    this.business.setQueueDepthSource(source);
  }

  async render(): Promise<string> {
    await this.refreshModels();
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
