import { UpstreamHealth } from '../upstream-health.ts';
import { UpstreamError } from '../../errors.ts';
import { UpstreamFailure, type JsonRpcHttpAnswer, type JsonRpcEngine } from './json-rpc-engine.ts';

/** The caller's verdict on an HTTP 2xx answer: usable, or a protocol failure of that node. */
export type AnswerVerdict<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

export interface SendOptions<T> {
  readonly signal?: AbortSignal | undefined;
  /** Judges a 2xx answer (a JSON-RPC error inside it is a valid answer, not a failure). */
  readonly accept: (answer: JsonRpcHttpAnswer) => AnswerVerdict<T>;
  readonly onFailure?: (upstreamId: string, reason: string) => void;
}

/**
 * The nodes of one network, in the operator's order, with failover: a connection error, a timeout, an HTTP error
 * status or an answer that is not JSON-RPC moves on to the next node (a JSON-RPC `error` inside a 200 does not:
 * it is the node's answer). A node that failed is tried last until its cooldown ends, never skipped, so a
 * single node still gets every request. Health is per process: it only orders the attempts.
 */
export class JsonRpcUpstreamSet {
  /** One failure is enough to put a node last. */
  private readonly health: UpstreamHealth;

  constructor(
    readonly label: string,
    readonly upstreams: readonly JsonRpcEngine[],
    private readonly cooldownMs: number,
    now: () => number = Date.now,
  ) {
    this.health = new UpstreamHealth({ failuresBeforeCooldown: 1 }, now);
  }

  async send<T>(body: string, options: SendOptions<T>): Promise<{ value: T; upstreamId: string }> {
    const ordered = this.health.healthyFirst(this.upstreams, (upstream) => upstream.id);
    let lastReason = 'no node is configured';
    let allTimedOut = ordered.length > 0;
    for (const upstream of ordered) {
      for (let attempt = 0; attempt < 2; attempt += 1) {
        let failure: UpstreamFailure | string;
        try {
          const answer = await upstream.post(body, { signal: options.signal });
          if (answer.status >= 200 && answer.status < 300) {
            const verdict = options.accept(answer);
            if (verdict.ok) {
              this.health.succeeded(upstream.id);
              return { value: verdict.value, upstreamId: upstream.id };
            }
            failure = verdict.reason;
          } else {
            failure = `the node answered HTTP ${answer.status}`;
          }
        } catch (error) {
          if (!(error instanceof UpstreamFailure)) throw error;
          if (error.kind === 'aborted') throw new UpstreamError('The request was cancelled', 'UPSTREAM_ERROR');
          // A dropped kept-alive connection says nothing about the node's health: one fresh try first.
          if (error.kind === 'reset' && attempt === 0) continue;
          failure = error;
        }
        const reason = typeof failure === 'string' ? failure : failure.message;
        if (typeof failure === 'string' || failure.kind !== 'timeout') allTimedOut = false;
        lastReason = reason;
        this.health.failed(upstream.id, this.cooldownMs);
        options.onFailure?.(upstream.id, reason);
        break;
      }
      if (options.signal?.aborted) throw new UpstreamError('The request was cancelled', 'UPSTREAM_ERROR');
    }
    if (allTimedOut) throw new UpstreamError(`The ${this.label} nodes did not answer in time`, 'REQUEST_TIMEOUT');
    throw new UpstreamError(`The ${this.label} nodes failed to answer (last: ${lastReason})`, 'UPSTREAM_ERROR');
  }

  close(): Promise<void> {
    return Promise.all(this.upstreams.map((upstream) => upstream.close())).then(() => undefined);
  }
}
