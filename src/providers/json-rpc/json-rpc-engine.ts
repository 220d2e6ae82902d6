/**
 * The JSON-RPC node capability (src/providers/): POST a JSON-RPC body to one node and hand back its
 * HTTP answer untouched. Which nodes serve which network, failover and cooldown live in upstream-set.ts.
 */

export interface JsonRpcHttpAnswer {
  readonly status: number;
  /** The node's body, byte for byte. */
  readonly body: Uint8Array<ArrayBuffer>;
}

/** Why a node gave no answer: `reset` (a kept-alive connection dropped) is worth one more try on the same node. */
export type UpstreamFailureKind = 'timeout' | 'connection' | 'reset' | 'too-large' | 'aborted';

export class UpstreamFailure extends Error {
  constructor(
    readonly kind: UpstreamFailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'UpstreamFailure';
  }
}

export interface JsonRpcEngine {
  /** The operator's provider id, or `env:<slug>#<n>`: for logs. Never the URL, which may carry an API key. */
  readonly id: string;
  /** Sends one request or batch. Any HTTP status resolves; no answer at all rejects with an UpstreamFailure. */
  post(body: string, options?: { signal?: AbortSignal | undefined }): Promise<JsonRpcHttpAnswer>;
  close(): Promise<void>;
}

/** Network settings of one node (from the operator config, or the defaults for env shortcuts). */
export interface JsonRpcUpstreamSettings {
  readonly url: string;
  /** Budget for one attempt on this node, body included. */
  readonly timeoutMs: number;
  readonly headers: Readonly<Record<string, string>>;
  /** A larger answer is refused (and the next node tried) rather than buffered. */
  readonly maxResponseBytes: number;
  /** Kept-alive connections to this node at most. */
  readonly connections: number;
}
