import type { Logger } from '../../logger.ts';
import type { ProviderConfig } from '../../operator-config/schema.ts';
import { factoryOf } from '../registry.ts';
import { UpstreamPool, type UpstreamMetrics } from '../upstream-pool.ts';
import type { JobEngine, JobRequest, JobResult, JobRunContext } from './job-engine.ts';

/*
 * The engines of queued jobs by provider id, each run through the upstream pool (src/providers/upstream-pool.ts)
 * for its abort rule and metrics. A job is bound to one provider when it is queued, and the queue retries a failed
 * attempt itself (src/media/jobs/job-queue.ts), so the pool makes one attempt and never falls back.
 */

export class JobGateway {
  private readonly pool: UpstreamPool<JobEngine>;

  constructor(providers: readonly ProviderConfig[], options: { logger?: Logger; metrics?: UpstreamMetrics } = {}) {
    this.pool = new UpstreamPool({
      label: 'job engine',
      unavailable: 'No engine serves this job',
      logger: options.logger,
      metrics: options.metrics,
    });
    for (const config of providers) {
      const make = factoryOf(config, 'jobs');
      if (make) this.set(config.id, make(config));
    }
  }

  get(providerId: string): JobEngine | undefined {
    return this.pool.get(providerId)?.engine;
  }

  /** Adds or replaces the engine of a provider (tests swap one in). */
  set(providerId: string, engine: JobEngine): void {
    this.pool.add({ engine, maxRetries: 0, cooldownMs: 0 }, providerId);
  }

  /** One attempt at a job on its provider's engine. */
  async run(
    providerId: string,
    upstreamModel: string,
    request: JobRequest,
    context: JobRunContext,
  ): Promise<JobResult> {
    const answer = await this.pool.run(
      [{ providerId, upstreamModel }],
      { operation: `job_${request.kind}`, signal: context.signal },
      (engine, model) => engine.run(model, request, context),
    );
    return answer.result;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
