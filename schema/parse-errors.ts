import { GraphQLError } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { clip } from '../src/errors.ts';

/**
 * A request Yoga's parsers cannot read is the caller's 400, not a 500: `GET /graphql?variables={bad` made
 * Yoga's GET parser throw a SyntaxError from `JSON.parse`, which it answered as an unexpected error. Errors the
 * parsers raise themselves (GraphQL errors with their status, such as the body limit's 413) pass unchanged.
 * Register it after useBodyLimit, so that it wraps the parser that plugin installs.
 */
export function useUnreadableRequestsAre400(): Plugin {
  return {
    onRequestParse({ requestParser, setRequestParser }) {
      if (!requestParser) return;
      const parse = requestParser;
      setRequestParser(async (request) => {
        try {
          return await parse(request);
        } catch (error) {
          if (error instanceof GraphQLError) throw error;
          const reason = error instanceof Error ? error.message : String(error);
          throw createGraphQLError(`The request could not be read: ${clip(reason)}`, {
            extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
          });
        }
      });
    },
  };
}
