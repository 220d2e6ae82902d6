import { z } from 'zod';
import { costHeaderValue } from '../../src/crypto-rpc/credits.ts';
import type { RpcCallOutcome } from '../../src/crypto-rpc/rpc-proxy.service.ts';
import { RpcRequestBodyDoc } from '../../src/crypto-rpc/rpc.inputs.ts';
import { json, text } from '../http.ts';
import type { Route } from '../router.ts';

const NetworksResponse = z.object({ networks: z.array(z.string()).describe('The served network slugs, sorted') });

export const cryptoRpcRoutes: Route[] = [
  {
    method: 'GET',
    path: '/crypto/rpc/networks',
    access: 'public',
    doc: {
      summary: 'The networks the crypto RPC proxy serves (those with a configured node)',
      tags: ['Crypto RPC'],
      response: NetworksResponse,
    },
    handler: ({ services }) => json({ networks: services.cryptoRpc.networks().map((network) => network.slug) }),
  },
  {
    method: 'POST',
    path: '/crypto/rpc/:network',
    access: 'account',
    doc: {
      summary:
        'JSON-RPC 2.0 to a blockchain node: one request or a batch of up to 100, billed in credits (X-Service-RPC-Credits, X-Service-RPC-Cost-USD). ' +
        'Optional Idempotency-Key header: a replay returns the stored response with Idempotent-Replayed: true and no charge.',
      tags: ['Crypto RPC'],
      body: RpcRequestBodyDoc,
      responseDescription: "The node's JSON-RPC response, byte for byte",
    },
    async handler(call) {
      // The raw bytes, not parsed JSON: the proxy validates each item itself and forwards the original body.
      const body = await call.bytes();
      const outcome = await call.services.cryptoRpc.call(
        call.auth,
        { network: call.params.network ?? '', body, idempotencyKey: call.header('idempotency-key') ?? null },
        { signal: call.signal },
      );
      return text(outcome.body, rpcHeaders(outcome, call.services.cryptoRpc.costHeaderPrefixes), outcome.status);
    },
  },
];

/** The proxy's answer headers (credits and cost under each configured prefix; an idempotent replay says so). */
function rpcHeaders(outcome: RpcCallOutcome, prefixes: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  for (const prefix of prefixes) {
    headers[`${prefix}-rpc-credits`] = String(outcome.credits);
    headers[`${prefix}-rpc-cost-usd`] = costHeaderValue(outcome.costNano);
  }
  if (outcome.replayed) headers['idempotent-replayed'] = 'true';
  return headers;
}
