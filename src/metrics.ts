import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Prometheus metrics of one app instance (its own registry, so tests can build many apps). */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'lagoon_http_requests_total',
    help: 'HTTP requests by route template, method and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'lagoon_http_request_duration_seconds',
    help: 'HTTP request latency by route template, method and status.',
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

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'lagoon_' });
  }

  /** One upstream call (chat gateway); a mid-stream break is counted with outcome `broken` and no latency. */
  observeUpstream(provider: string, operation: string, outcome: string, seconds: number): void {
    const labels = { provider, operation, outcome };
    this.upstreamCalls.inc(labels);
    if (outcome !== 'broken') this.upstreamLatency.observe(labels, seconds);
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.requests.inc(labels);
    this.latency.observe(labels, seconds);
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
