import type { ExecutionResult, GraphQLError } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { WalletTopUpRequiredError } from '../src/errors.ts';
import type { GraphQLContext } from './context.ts';

/**
 * A wallet caller out of credit (below its minimum balance, or short of a call's hold) gets, in GraphQL, the same
 * data as REST's 402 body (docs/api.md, Wallet callers): the error's extensions carry `code: "PAYMENT_REQUIRED"`,
 * the balance, the top-up instructions, a fresh sign-in challenge, and the x402 requirements (`x402Version`,
 * `accepts`) REST sends in its PAYMENT-REQUIRED header. The body needs the wallet's balance (a database read), so it
 * is built here after execution rather than in the synchronous error masking.
 */
export function useWalletTopUpErrors(): Plugin<GraphQLContext> {
  async function enrich(context: GraphQLContext, result: ExecutionResult): Promise<ExecutionResult | undefined> {
    const { auth } = context;
    if (auth.kind !== 'wallet' || !result.errors?.some(isTopUpRequired)) return undefined;
    const { wallets } = context.services;
    const { body, requirements } = await wallets.topUpRequired(auth.accountId);
    const extensions = { ...body, ...requirements };
    const errors = result.errors.map((error) =>
      isTopUpRequired(error)
        ? createGraphQLError(error.message, {
            nodes: error.nodes,
            path: error.path,
            extensions: { ...error.extensions, ...extensions },
          })
        : error,
    );
    return { ...result, errors };
  }

  /** A result as it is, or with its top-up errors filled in (a stream is left alone: it began, so it was paid). */
  async function withTopUp<R extends ExecutionResult | AsyncIterable<unknown>>(
    context: GraphQLContext,
    result: R,
  ): Promise<R> {
    if (Symbol.asyncIterator in result) return result;
    return ((await enrich(context, result)) ?? result) as R;
  }

  // The execute and subscribe functions are wrapped (not their done hooks): a subscription refused before it
  // starts (chatCompletionStream's hold) never reaches an async hook of its own.
  return {
    onExecute({ executeFn, setExecuteFn }) {
      setExecuteFn(async (args) => withTopUp(args.contextValue as GraphQLContext, await executeFn(args)));
    },
    onSubscribe({ subscribeFn, setSubscribeFn }) {
      setSubscribeFn(async (args) => withTopUp(args.contextValue as GraphQLContext, await subscribeFn(args)));
    },
  };
}

/** The wrapped functions see errors before Yoga masks them: the original error is at hand. */
function isTopUpRequired(error: GraphQLError): boolean {
  return error.originalError instanceof WalletTopUpRequiredError;
}
