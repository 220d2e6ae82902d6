import { z } from 'zod';
import { ValidationError, type ValidationIssue } from '../errors.ts';
import type { ChainFamily } from './chains.ts';
import { classifyMethod, type MethodTier } from './methods.ts';

/** Limits clients rely on (docs/api.md): batch size and the Idempotency-Key pattern. */
export const MAX_BATCH_ITEMS = 100;
export const IDEMPOTENCY_KEY = /^[A-Za-z0-9_-]{1,255}$/;

export type JsonRpcId = string | number | null;

export interface RpcRequestItem {
  readonly id: JsonRpcId;
  readonly method: string;
  readonly tier: MethodTier;
  /** eth_sendRawTransaction only: the signed transaction (hashed for the log, never stored). */
  readonly rawTransaction?: `0x${string}`;
}

export interface ParsedRpcRequest {
  readonly batch: boolean;
  readonly items: readonly RpcRequestItem[];
  /**
   * What is sent upstream: each item rebuilt from its four JSON-RPC fields. Forwarding the caller's bytes could
   * smuggle a second "method" key past the allowlist (JSON parsers disagree on which duplicate wins).
   */
  readonly forwardBody: string;
}

/** For the OpenAPI document only; validation below checks each item by hand to report every offending method. */
const RpcRequestItemDoc = z.object({
  jsonrpc: z.literal('2.0'),
  method: z.string().describe('An allowlisted method (Standard ×1, Advanced ×2, Large ×4 credits)'),
  params: z.union([z.array(z.unknown()), z.record(z.string(), z.unknown())]).optional(),
  id: z.union([z.string(), z.number(), z.null()]).describe('Echoed back; required (correlates batch items)'),
});
export const RpcRequestBodyDoc = z.union([RpcRequestItemDoc, z.array(RpcRequestItemDoc).min(1).max(MAX_BATCH_ITEMS)]);

const HEX_BYTES = /^0x(?:[0-9a-fA-F]{2})+$/;

/**
 * Validates a JSON-RPC 2.0 request or batch for a network of `family` (JSON-RPC 2.0 only): every item is checked
 * on its own and any bad item rejects the whole request, naming every unsupported method with the reason.
 */
export function parseRpcRequest(family: ChainFamily, body: unknown): ParsedRpcRequest {
  const batch = Array.isArray(body);
  if (!batch && (typeof body !== 'object' || body === null)) {
    throw new ValidationError(
      `The body must be a JSON-RPC 2.0 request object or a batch (array) of 1 to ${MAX_BATCH_ITEMS} requests`,
    );
  }
  const rawItems: unknown[] = batch ? body : [body];
  if (rawItems.length === 0 || rawItems.length > MAX_BATCH_ITEMS) {
    throw new ValidationError(`A batch holds 1 to ${MAX_BATCH_ITEMS} requests; got ${rawItems.length}`);
  }
  const issues: ValidationIssue[] = [];
  const unsupported = new Map<string, string>();
  const items: RpcRequestItem[] = [];
  const forwarded: Record<string, unknown>[] = [];
  const seenIds = new Set<string>();
  rawItems.forEach((raw, index) => {
    const at = (field?: string): (string | number)[] => [...(batch ? [index] : []), ...(field ? [field] : [])];
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      issues.push({ path: at(), message: 'Each request must be a JSON object' });
      return;
    }
    const item = raw as Record<string, unknown>;
    const before = issues.length;
    if (item.jsonrpc !== '2.0') issues.push({ path: at('jsonrpc'), message: 'Must be "2.0"' });
    const { id, method, params } = item;
    if (
      !('id' in item) ||
      !(typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) || id === null)
    ) {
      issues.push({
        path: at('id'),
        message: 'Required: a string, number or null (notifications without an id are not served)',
      });
    } else if (batch) {
      const idKey = JSON.stringify(id);
      if (seenIds.has(idKey))
        issues.push({ path: at('id'), message: `Duplicate id ${idKey}: ids correlate the responses of a batch` });
      seenIds.add(idKey);
    }
    if (params !== undefined && (typeof params !== 'object' || params === null))
      issues.push({ path: at('params'), message: 'Must be an array or an object' });
    if (typeof method !== 'string' || method === '') {
      issues.push({ path: at('method'), message: 'Required: the method name' });
      return;
    }
    const verdict = classifyMethod(family, method);
    if (!verdict.allowed) {
      unsupported.set(method, verdict.reason);
      issues.push({ path: at('method'), message: `Unsupported method ${method}: ${verdict.reason}` });
      return;
    }
    let rawTransaction: `0x${string}` | undefined;
    if (method === 'eth_sendRawTransaction') {
      const first = Array.isArray(params) ? (params[0] as unknown) : undefined;
      if (typeof first === 'string' && HEX_BYTES.test(first)) rawTransaction = first as `0x${string}`;
      else
        issues.push({
          path: at('params'),
          message: 'eth_sendRawTransaction takes [signedTransaction] as 0x-prefixed hex',
        });
    }
    if (issues.length > before) return;
    items.push({ id: id as JsonRpcId, method, tier: verdict.tier, ...(rawTransaction ? { rawTransaction } : {}) });
    forwarded.push(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
  });
  if (issues.length > 0) throw rejection(issues, unsupported);
  return { batch, items, forwardBody: JSON.stringify(batch ? forwarded : forwarded[0]) };
}

function rejection(issues: ValidationIssue[], unsupported: Map<string, string>): ValidationError {
  if (unsupported.size > 0) {
    const list = [...unsupported].map(([method, reason]) => `${method} (${reason})`).join('; ');
    const message = `Unsupported method${unsupported.size > 1 ? 's' : ''}: ${list}. Nothing was forwarded or charged.`;
    return new ValidationError(message, issues);
  }
  const first = issues[0];
  const where =
    first && first.path.length > 0
      ? `${first.path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i > 0 ? `.${p}` : p)).join('')}: `
      : '';
  return new ValidationError(`Invalid JSON-RPC request: ${where}${first?.message ?? 'invalid input'}`, issues);
}

/** The Idempotency-Key header, if any; a malformed one is a 400 (pattern `[A-Za-z0-9_-]{1,255}`). */
export function parseIdempotencyKey(value: string | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (!IDEMPOTENCY_KEY.test(value)) {
    throw new ValidationError('Idempotency-Key must be 1 to 255 characters of letters, digits, "_" and "-"', [
      { path: ['Idempotency-Key'], message: 'Must match ^[A-Za-z0-9_-]{1,255}$' },
    ]);
  }
  return value;
}
