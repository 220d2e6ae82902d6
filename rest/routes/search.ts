import { z } from 'zod';
import { ScrapeInput } from '../../src/augment/scrape.service.ts';
import { SearchInput } from '../../src/augment/search.inputs.ts';
import { balanceHeaders, json } from '../http.ts';
import type { Route } from '../router.ts';

const SearchResultWire = z.object({
  title: z.string(),
  url: z.string(),
  content: z.string(),
  date: z.string().describe('ISO 8601 date-time, or "" when unknown'),
});
const SearchResponse = z.object({
  query: z.string().describe('The executed (trimmed) query'),
  results: z.array(SearchResultWire),
});

export const searchRoutes: Route[] = [
  {
    method: 'POST',
    path: '/augment/search',
    access: 'account',
    doc: {
      summary: 'Web search (experimental); 0.01 USD per successful request. Queries are neither logged nor stored.',
      tags: ['Augment'],
      body: SearchInput,
      response: SearchResponse,
    },
    async handler(call) {
      const { services, auth, signal } = call;
      const { query, results, charge } = await services.search.search(auth, await call.json(), { signal });
      return json(
        { query, results: results.map(({ title, url, content, date }) => ({ title, url, content, date })) },
        200,
        balanceHeaders(charge),
      );
    },
  },
  {
    method: 'POST',
    path: '/augment/scrape',
    access: 'account',
    doc: {
      summary:
        'One web page as Markdown; 0.01 USD per page read, nothing when it cannot be read. Public addresses only; sites that refuse automated readers (X/Twitter, Reddit) are refused at once.',
      tags: ['Augment'],
      body: ScrapeInput,
      response: z.object({ url: z.string(), content: z.string(), format: z.literal('markdown') }),
    },
    async handler(call) {
      const { url, content, charge } = await call.services.scrape.scrape(call.auth, await call.json(), {
        signal: call.signal,
      });
      return json({ url, content, format: 'markdown' }, 200, balanceHeaders(charge));
    },
  },
];
