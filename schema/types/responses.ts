import { NotFoundError } from '../../src/errors.ts';
import { formatNano } from '../../src/billing/money.ts';
import type { SettledCharge } from '../../src/billing/billing.types.ts';
import { builder } from '../builder.ts';
import { CurrencyEnum } from './enums.ts';
import { PAID_MEDIA_ERRORS } from './media.ts';

type Answered = { readonly response: Record<string, unknown>; readonly charge: SettledCharge };

const ResponseResultRef = builder.objectRef<Answered>('ResponseResult').implement({
  description: 'A Responses API answer (as POST /api/v1/responses without stream).',
  fields: (t) => ({
    id: t.string({ resolve: (answer) => String(answer.response.id) }),
    model: t.string({ resolve: (answer) => String(answer.response.model) }),
    status: t.string({ description: 'completed or incomplete.', resolve: (answer) => String(answer.response.status) }),
    outputText: t.string({ resolve: (answer) => String(answer.response.output_text) }),
    response: t.field({
      type: 'JSONObject',
      description: 'The whole response object: output items, usage, …',
      resolve: (answer) => answer.response,
    }),
    charged: t.field({ type: 'Decimal', resolve: (answer) => formatNano(answer.charge.charged) }),
    currency: t.field({ type: CurrencyEnum, resolve: (answer) => answer.charge.currency }),
  }),
});

// A mutation, not a query: it charges, and GET requests serve queries only.
builder.mutationFields((t) => ({
  createResponse: t.field({
    type: ResponseResultRef,
    description:
      'The OpenAI Responses API over chat: `input` is the REST body (model, input, instructions, tools, ' +
      'previous_response_id, …; `stream` is ignored). Billed as chat.',
    authScopes: { account: true },
    args: { input: t.arg({ type: 'JSONObject', required: true }) },
    errors: { types: [...PAID_MEDIA_ERRORS, NotFoundError] },
    resolve: async (_root, { input }, context) => {
      const outcome = await context.services.responses.create(
        context.auth,
        { ...(input as Record<string, unknown>), stream: false },
        { signal: context.signal },
      );
      if (outcome.stream) throw new Error('unreachable: a non-streaming call returned a stream');
      return { response: outcome.response, charge: outcome.charge };
    },
  }),
}));
