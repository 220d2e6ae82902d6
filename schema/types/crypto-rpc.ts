import { formatNano } from '../../src/billing/money.ts';
import { RpcCapExceededError } from '../../src/crypto-rpc/caps.ts';
import { costHeaderValue } from '../../src/crypto-rpc/credits.ts';
import type { RpcNetworkInfo } from '../../src/crypto-rpc/rpc-proxy.service.ts';
import { InsufficientBalanceError, SpendLimitExceededError, UpstreamError, ValidationError } from '../../src/errors.ts';
import { builder } from '../builder.ts';
import { ErrorInterface } from '../errors.ts';

interface RpcCallResult {
  readonly response: unknown;
  readonly credits: number;
  readonly costNano: bigint;
  readonly replayed: boolean;
  readonly requestId: string;
}

const RpcNetworkRef = builder.objectRef<RpcNetworkInfo>('RpcNetwork').implement({
  description: 'A blockchain network the crypto RPC proxy serves.',
  fields: (t) => ({
    slug: t.exposeString('slug', {
      description: 'The path segment of POST /api/v1/crypto/rpc/{network}, e.g. ethereum-sepolia.',
    }),
    family: t.exposeString('family', {
      description: 'The chain family (ethereum, polygon, arbitrum, …, zksync, starknet).',
    }),
    baseCredits: t.exposeInt('baseCredits', {
      description: 'Credits of one Standard-tier call (Advanced ×2, Large ×4; an item answered with an error costs 5).',
    }),
  }),
});

const RpcCallResultRef = builder.objectRef<RpcCallResult>('RpcCallResult').implement({
  fields: (t) => ({
    response: t.field({
      type: 'JSON',
      description: "The node's JSON-RPC response (an array for a batch, in request order).",
      resolve: (result) => result.response,
    }),
    credits: t.exposeInt('credits', { description: 'Credits charged (X-Service-RPC-Credits).' }),
    costUsd: t.field({
      type: 'Decimal',
      description: 'The exact cost in USD.',
      resolve: (result) => formatNano(result.costNano),
    }),
    costUsdHeader: t.string({
      description: 'The cost as the REST header X-Service-RPC-Cost-USD shows it (8 decimals).',
      resolve: (result) => costHeaderValue(result.costNano),
    }),
    replayed: t.exposeBoolean('replayed', {
      description: 'Served from the idempotency store: nothing was forwarded or charged.',
    }),
    requestId: t.exposeString('requestId'),
  }),
});

builder.objectType(RpcCapExceededError, {
  name: 'RpcCapExceededError',
  description: 'A per-account cap of the crypto RPC proxy is reached (REST 429); nothing was forwarded or charged.',
  interfaces: [ErrorInterface],
  isTypeOf: (value) => value instanceof RpcCapExceededError,
  fields: (t) => ({
    cap: t.string({ description: 'requests-per-minute or credits-per-24h', resolve: (error) => error.cap }),
    customMessage: t.exposeString('customMessage'),
    limit: t.exposeInt('limit'),
    remaining: t.exposeInt('remaining'),
    resetAt: t.field({ type: 'DateTime', resolve: (error) => error.resetAt }),
  }),
});

builder.queryFields((t) => ({
  rpcNetworks: t.field({
    type: [RpcNetworkRef],
    description: 'The networks of the crypto RPC proxy, sorted by slug (public).',
    resolve: (_root, _args, context) => context.services.cryptoRpc.networks(),
  }),
}));

builder.mutationFields((t) => ({
  rpcCall: t.field({
    type: RpcCallResultRef,
    description:
      'Sends a JSON-RPC 2.0 request or a batch of up to 100 to a network, billed in credits like POST /api/v1/crypto/rpc/{network}.',
    authScopes: { account: true },
    args: {
      network: t.arg.string({ required: true }),
      request: t.arg({ type: 'JSON', required: true, description: 'A JSON-RPC request object, or an array of them.' }),
      idempotencyKey: t.arg.string({
        required: false,
        description: 'Like the Idempotency-Key header: a replay returns the stored response without a charge.',
      }),
    },
    errors: {
      types: [ValidationError, InsufficientBalanceError, SpendLimitExceededError, UpstreamError, RpcCapExceededError],
    },
    resolve: async (_root, args, context) => {
      const outcome = await context.services.cryptoRpc.call(
        context.auth,
        {
          network: args.network,
          body: JSON.stringify(args.request) ?? '',
          idempotencyKey: args.idempotencyKey,
        },
        { signal: context.signal },
      );
      await outcome.settlement;
      return {
        response: JSON.parse(new TextDecoder().decode(outcome.body)) as unknown,
        credits: outcome.credits,
        costNano: outcome.costNano,
        replayed: outcome.replayed,
        requestId: context.requestId,
      };
    },
  }),
}));
