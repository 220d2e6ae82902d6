import type { ScrapeOutcome } from '../../src/augment/scrape.service.ts';
import type { SearchOutcome } from '../../src/augment/search.service.ts';
import { formatNano } from '../../src/billing/money.ts';
import { InsufficientBalanceError, SpendLimitExceededError, UpstreamError, ValidationError } from '../../src/errors.ts';
import type { SearchResult } from '../../src/providers/search/search-engine.ts';
import { RateLimitExceededError } from '../../src/rate-limits/rate-limiter.ts';
import { builder } from '../builder.ts';
import { CurrencyEnum } from './enums.ts';

const SearchProviderEnum = builder.enumType('SearchEngine', {
  description: 'Which search service answers (REST `search_provider`).',
  values: {
    BRAVE: { value: 'brave', description: 'The default: the zero-data-retention provider.' },
    GOOGLE: { value: 'google', description: 'Reached through this service, so the caller is not identified.' },
  } as const,
});

const SearchResultRef = builder.objectRef<SearchResult>('SearchResult').implement({
  description: 'One web search hit.',
  fields: (t) => ({
    title: t.exposeString('title'),
    url: t.exposeString('url'),
    content: t.exposeString('content', { description: 'The snippet, as plain text.' }),
    date: t.exposeString('date', {
      description: 'ISO 8601 date-time of publication, or "" when the source gives none.',
    }),
  }),
});

const SearchResponseRef = builder.objectRef<SearchOutcome>('SearchResponse').implement({
  fields: (t) => ({
    query: t.exposeString('query', { description: 'The executed query (trimmed).' }),
    results: t.field({ type: [SearchResultRef], resolve: (outcome) => [...outcome.results] }),
    charged: t.field({
      type: 'Decimal',
      description: 'The amount charged, in `currency`.',
      resolve: (outcome) => formatNano(outcome.charge.charged),
    }),
    currency: t.field({
      type: CurrencyEnum,
      description: 'The balance that paid.',
      resolve: (outcome) => outcome.charge.currency,
    }),
  }),
});

const SearchInputRef = builder.inputType('SearchInput', {
  fields: (t) => ({
    query: t.string({ required: true, description: '1 to 400 characters.' }),
    limit: t.int({ required: false, description: '1 to 20; default 10.' }),
    searchProvider: t.field({ type: SearchProviderEnum, required: false, description: 'Default BRAVE.' }),
  }),
});

/** The typed errors of a paid augment call: bad input, money, the key's rate limits, the upstream. */
const AUGMENT_ERRORS = [
  ValidationError,
  InsufficientBalanceError,
  SpendLimitExceededError,
  RateLimitExceededError,
  UpstreamError,
];

// A mutation, not a query: it charges, and GET requests (cacheable, logged, sent by links) serve queries only.
builder.mutationFields((t) => ({
  search: t.field({
    type: SearchResponseRef,
    description:
      'Web search (experimental): 0.01 USD per successful request, nothing on failure. Queries are neither logged nor stored.',
    authScopes: { account: true },
    args: { input: t.arg({ type: SearchInputRef, required: true }) },
    errors: { types: AUGMENT_ERRORS },
    resolve: (_root, { input }, context) =>
      context.services.search.search(context.auth, {
        query: input.query,
        ...(input.limit !== null && input.limit !== undefined ? { limit: input.limit } : {}),
        ...(input.searchProvider ? { search_provider: input.searchProvider } : {}),
      }),
  }),
}));

const ScrapeResponseRef = builder.objectRef<ScrapeOutcome>('ScrapeResponse').implement({
  fields: (t) => ({
    url: t.exposeString('url'),
    content: t.exposeString('content', { description: 'The page as Markdown.' }),
    charged: t.field({
      type: 'Decimal',
      description: 'The amount charged, in `currency`.',
      resolve: (outcome) => formatNano(outcome.charge.charged),
    }),
    currency: t.field({ type: CurrencyEnum, resolve: (outcome) => outcome.charge.currency }),
  }),
});

builder.mutationFields((t) => ({
  scrape: t.field({
    type: ScrapeResponseRef,
    description: 'One web page as Markdown: 0.01 USD per page read, nothing when it cannot be read.',
    authScopes: { account: true },
    args: { url: t.arg.string({ required: true, description: 'http or https; public addresses only' }) },
    errors: { types: AUGMENT_ERRORS },
    resolve: (_root, { url }, context) => context.services.scrape.scrape(context.auth, { url }),
  }),
}));
