import { z } from 'zod';
import { SEARCH_PROVIDER_IDS } from '../providers/search/search-routing.ts';

export const SEARCH_QUERY_MAX_CHARS = 400;
export const SEARCH_LIMIT_MAX = 20;
export const SEARCH_LIMIT_DEFAULT = 10;

/** The body of POST /augment/search (bounds in docs/api.md, Web search), shared by REST and GraphQL. */
export const SearchInput = z.object({
  query: z
    .string()
    .trim()
    .min(1, `Required: 1 to ${SEARCH_QUERY_MAX_CHARS} characters`)
    .refine((query) => [...query].length <= SEARCH_QUERY_MAX_CHARS, `At most ${SEARCH_QUERY_MAX_CHARS} characters`)
    .describe(`The search terms, 1 to ${SEARCH_QUERY_MAX_CHARS} characters (leading and trailing spaces are trimmed).`),
  limit: z
    .number()
    .int('Must be a whole number')
    .min(1, `Must be 1 to ${SEARCH_LIMIT_MAX}`)
    .max(SEARCH_LIMIT_MAX, `Must be 1 to ${SEARCH_LIMIT_MAX}`)
    .default(SEARCH_LIMIT_DEFAULT)
    .describe(`The most results to return, 1 to ${SEARCH_LIMIT_MAX}.`),
  search_provider: z
    .enum(SEARCH_PROVIDER_IDS, { error: `Must be one of: ${SEARCH_PROVIDER_IDS.join(', ')}` })
    .default('brave')
    .describe(
      'brave (the default: zero data retention) or google (reached through this service, so the caller is not identified).',
    ),
});
export type SearchInput = z.output<typeof SearchInput>;
