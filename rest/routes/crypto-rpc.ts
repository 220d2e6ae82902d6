import { z } from 'zod';
import { costHeaderValue } from '../../src/crypto-rpc/credits.ts';
import type { RpcCallOutcome } from '../../src/crypto-rpc/rpc-proxy.service.ts';
import { RpcRequestBodyDoc } from '../../src/crypto-rpc/rpc.inputs.ts';
import { json, readBodyLimited, requireJsonContentType } from '../http.ts';
import { readNodeJsonBytes, sendNode, type NodeRoute } from '../node-route.ts';
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
    // The HTTP server answers this route on Node's own objects (rpcNodeRoute); this handler serves the in-process fetch handler.
    async handler({ services, auth, request, params, config }) {
      // The raw bytes, not parsed JSON: the proxy validates each item itself and forwards the original body.
      requireJsonContentType(request);
      const body = await readBodyLimited(request, config.http.maxJsonBytes);
      const outcome = await services.cryptoRpc.call(
        auth,
        { network: params.network ?? '', body, idempotencyKey: request.headers.get('idempotency-key') },
        { signal: request.signal },
      );
      return new Response(outcome.body, { status: outcome.status, headers: rpcHeaders(outcome) });
    },
  },
];

/** The proxy's answer headers (credits and cost; an idempotent replay says so). */
function rpcHeaders(outcome: RpcCallOutcome): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-service-rpc-credits': String(outcome.credits),
    'x-service-rpc-cost-usd': costHeaderValue(outcome.costNano),
  };
  if (outcome.replayed) headers['idempotent-replayed'] = 'true';
  return headers;
}

/** POST /api/v1/crypto/rpc/{network} on Node's objects (node-route.ts): the same answers as the route above. */
export const rpcNodeRoute: NodeRoute = {
  method: 'POST',
  path: '/api/v1/crypto/rpc/:network',
  label: 'POST /api/v1/crypto/rpc/:network',
  async serve({ req, res, ctx, auth, params, signal }) {
    const body = await readNodeJsonBytes(req, ctx.maxJsonBytes);
    const key = req.headers['idempotency-key'];
    const outcome = await ctx.services.cryptoRpc.call(
      auth,
      { network: params.network ?? '', body, idempotencyKey: typeof key === 'string' ? key : null },
      { signal },
    );
    sendNode(res, ctx, outcome.status, outcome.body, rpcHeaders(outcome));
  },
};
