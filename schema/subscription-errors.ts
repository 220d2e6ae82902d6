import { GraphQLError, type ExecutionResult } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { AppError } from '../src/errors.ts';
import type { Logger } from '../src/logger.ts';

/**
 * A subscription's source stream that throws (a refusal checked on the first read, such as `walletBalance`
 * without a wallet sign-in, or an unexpected failure) ends with one error result instead of a rejected read.
 * graphql-js hands such a throw to the transport as a rejection, which graphql-sse does not catch: it errored
 * the response stream and the process exited. Every transport now sees `{ data: null, errors }` and then the end;
 * the error is masked like any other (schema/yoga.ts), and an unexpected one is logged.
 */
export function useSubscriptionErrors(deps: { logger: Logger }): Plugin {
  return {
    onSubscribe() {
      return {
        onSubscribeResult({ result, setResult }) {
          if (isAsyncIterable(result)) setResult(endingInErrorResult(result, deps.logger));
        },
      };
    },
  };
}

export function isAsyncIterable<T>(value: unknown): value is AsyncIterable<T> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/** The error as a GraphQL error, logged when it is not an expected refusal (an AppError). */
export function subscriptionError(error: unknown, logger: Logger): GraphQLError {
  const original = error instanceof GraphQLError ? error.originalError : error;
  const expected = original === undefined || original instanceof AppError || original instanceof GraphQLError;
  if (!expected) logger.error({ err: error }, 'subscription failed');
  if (error instanceof GraphQLError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return createGraphQLError(message, { originalError: error instanceof Error ? error : new Error(message) });
}

/**
 * The stream, with a throw from a read turned into a last error result. A hand-written iterator rather than an
 * async generator: `return()` (the client unsubscribed) must reach the source at once, even while a read waits
 * for the next event, so that a streamed chat stops its model.
 */
export function endingInErrorResult<T extends ExecutionResult>(
  source: AsyncIterable<T>,
  logger: Logger,
): AsyncGenerator<T | ExecutionResult> {
  const iterator = source[Symbol.asyncIterator]();
  let ended = false;
  const done = (): IteratorResult<T | ExecutionResult, undefined> => ({ done: true, value: undefined });
  const stream: AsyncGenerator<T | ExecutionResult> = {
    [Symbol.asyncIterator]: () => stream,
    async next() {
      if (ended) return done();
      try {
        const read = await iterator.next();
        if (read.done) ended = true;
        return read;
      } catch (error) {
        ended = true;
        return { done: false, value: { data: null, errors: [subscriptionError(error, logger)] } };
      }
    },
    async return() {
      ended = true;
      try {
        await iterator.return?.();
      } catch (error) {
        logger.warn({ err: error }, 'subscription source failed to close');
      }
      return done();
    },
    async throw(error: unknown) {
      ended = true;
      await stream.return(undefined);
      throw error;
    },
  };
  return stream;
}
