import { z } from 'zod';
import { ResponsesInput } from '../../src/responses/responses.inputs.ts';
import { compressJson } from '../compression.ts';
import { balanceHeaders, json, type JsonValue } from '../http.ts';
import type { Route } from '../router.ts';
import { sse } from '../sse.ts';

/*
 * POST /responses, GET and DELETE /responses/{id} (docs/api.md, Responses): OpenAI's Responses API over chat. SSE:
 * one `data: <event>` per typed event (the event's `type` names it), then `data: [DONE]`.
 */

const tags = ['Responses'];
const ResponseWire = z
  .looseObject({
    id: z.string().describe('`resp_` and 32 hex digits'),
    object: z.literal('response'),
    created_at: z.number().int(),
    status: z.enum(['completed', 'incomplete', 'failed', 'in_progress']),
    model: z.string(),
    output: z.array(z.looseObject({ type: z.string(), id: z.string() })),
    output_text: z.string(),
    usage: z
      .object({
        input_tokens: z.number().int(),
        input_tokens_details: z.object({ cached_tokens: z.number().int() }),
        output_tokens: z.number().int(),
        output_tokens_details: z.object({ reasoning_tokens: z.number().int() }),
        total_tokens: z.number().int(),
      })
      .nullable(),
  })
  .describe('The response object (OpenAI shape)');

export const responsesRoutes: Route[] = [
  {
    method: 'POST',
    path: '/responses',
    access: 'account',
    bodyLimit: 'chat',
    doc: {
      summary:
        'OpenAI Responses API over chat: input string or items, instructions, function tools, `stream` (typed ' +
        'events), `previous_response_id` (responses are stored per account unless `store: false`). Billed as chat.',
      tags,
      body: ResponsesInput,
      response: ResponseWire,
    },
    async handler(call) {
      const outcome = await call.services.responses.create(call.auth, await call.json(), { signal: call.signal });
      if (outcome.stream) return sse(outcome.events, (event) => event);
      const answer = await compressJson(
        JSON.stringify(outcome.response),
        call.headers['accept-encoding'],
        balanceHeaders(outcome.charge),
      );
      return { status: 200, ...answer };
    },
  },
  {
    method: 'GET',
    path: '/responses/:id',
    access: 'account',
    doc: { summary: 'A stored response of this account (404 for any other id)', tags, response: ResponseWire },
    async handler({ services, auth, params }) {
      return json((await services.responses.get(auth, params.id ?? '')) as JsonValue);
    },
  },
  {
    method: 'DELETE',
    path: '/responses/:id',
    access: 'account',
    doc: {
      summary: 'Deletes a stored response of this account',
      tags,
      response: z.object({ id: z.string(), object: z.literal('response'), deleted: z.literal(true) }),
    },
    async handler({ services, auth, params }) {
      return json(await services.responses.delete(auth, params.id ?? ''));
    },
  },
];
