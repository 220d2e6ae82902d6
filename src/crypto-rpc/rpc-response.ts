import type { JsonRpcId, RpcRequestItem } from './rpc.inputs.ts';

/** What the proxy learned from a node's answer: which request items came back as errors, and what to send on. */
export type ResponseAnalysis =
  | {
      readonly ok: true;
      /** Per request item, in request order: answered with `error` (or not answered at all). */
      readonly errored: readonly boolean[];
      /** Per request item: whether the node answered it at all. */
      readonly answered: readonly boolean[];
      /** The bytes for the caller: the node's own unless a batch had to be put back in request order. */
      readonly body: Uint8Array<ArrayBuffer>;
    }
  | { readonly ok: false; readonly reason: string };

type JsonObject = Record<string, unknown>;

const decoder = new TextDecoder('utf-8', { fatal: true });
const encoder = new TextEncoder();
const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isResponse = (value: unknown): value is JsonObject => isObject(value) && ('result' in value || 'error' in value);
const hasError = (value: JsonObject): boolean => value.error !== undefined && value.error !== null;
const idKey = (id: unknown): string => JSON.stringify(id ?? null);

/**
 * Reads a node's HTTP 200 body for `items` (billed per item). A single response passes through byte for
 * byte. A batch passes through byte for byte when the node kept the request order (every mainstream node does);
 * otherwise its items are put back in request order, and an item the node left out is answered with an
 * internal error. A body that is not JSON-RPC is a failure of that node (the caller tries the next one).
 */
export function analyzeResponse(
  items: readonly RpcRequestItem[],
  batch: boolean,
  body: Uint8Array<ArrayBuffer>,
): ResponseAnalysis {
  let parsed: unknown;
  try {
    parsed = JSON.parse(decoder.decode(body));
  } catch {
    return { ok: false, reason: 'the node answered with something other than JSON' };
  }
  if (!batch) {
    if (!isResponse(parsed)) return { ok: false, reason: 'the node answered without a JSON-RPC response object' };
    return { ok: true, errored: [hasError(parsed)], answered: [true], body };
  }
  if (isResponse(parsed)) {
    // A node that refuses a whole batch (too large, rate limited) answers one error object: every item failed.
    return { ok: true, errored: items.map(() => true), answered: items.map(() => false), body };
  }
  if (!Array.isArray(parsed) || !parsed.every(isResponse))
    return { ok: false, reason: 'the node answered a batch without an array of JSON-RPC responses' };
  const responses = parsed as JsonObject[];
  const inOrder =
    responses.length === items.length && items.every((item, index) => idKey(responses[index]?.id) === idKey(item.id));
  if (inOrder) return { ok: true, errored: responses.map(hasError), answered: items.map(() => true), body };

  const byId = new Map<string, JsonObject>();
  for (const response of responses) if (!byId.has(idKey(response.id))) byId.set(idKey(response.id), response);
  const ordered = items.map((item) => byId.get(idKey(item.id)));
  const rebuilt = ordered.map((response, index) => response ?? unanswered(items[index]?.id ?? null));
  return {
    ok: true,
    errored: rebuilt.map(hasError),
    answered: ordered.map((response) => response !== undefined),
    body: encoder.encode(JSON.stringify(rebuilt)),
  };
}

function unanswered(id: JsonRpcId): JsonObject {
  return { jsonrpc: '2.0', id, error: { code: -32603, message: 'The node returned no response for this request' } };
}
