import type { AuthContext } from '../auth/auth-context.ts';
import { requireAccount } from '../auth/permissions.ts';
import type { SettledCharge } from '../billing/billing.types.ts';
import type { ChatService } from '../chat/chat.service.ts';
import type { Database } from '../db/database.ts';
import { clip, NotFoundError, type AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { JsonObject } from '../providers/chat/chat-engine.ts';
import { parseInput } from '../validation.ts';
import {
  newId,
  outputMessages,
  outputOf,
  responseObject,
  ResponseEventStream,
  type OutputItem,
  type ResponseEcho,
} from './responses-output.ts';
import { chatBody, inputMessages } from './responses-translate.ts';
import { deleteResponse, findResponse, insertResponse } from './responses.repository.ts';
import { ResponsesInput } from './responses.inputs.ts';

/** The ids this service hands out (`resp_` and 32 hex digits); anything else cannot exist, so it is not looked up. */
const RESPONSE_ID = /^resp_[0-9a-f]{32}$/;
const notFound = (id: string) => new NotFoundError(`Response ${clip(id)} not found`);

export type ResponsesOutcome =
  | { readonly stream: false; readonly response: JsonObject; readonly charge: SettledCharge }
  | { readonly stream: true; readonly events: AsyncIterable<JsonObject> };

/**
 * The OpenAI Responses API (POST /responses) over the chat service: the request is run as a chat completion (so
 * model resolution, pricing, holds and settlement are chat's), its answer turned into output items or typed events.
 * With `store` (the default) the conversation is kept per account so `previous_response_id` can continue it; the
 * stateless form (the caller resends the history as items) works too.
 */
export class ResponsesService {
  constructor(private readonly deps: { db: Database; chat: ChatService; logger: Logger }) {}

  async create(auth: AuthContext, raw: unknown, options: { signal?: AbortSignal } = {}): Promise<ResponsesOutcome> {
    const account = requireAccount(auth);
    const input = parseInput(ResponsesInput, raw);
    const previousId = input.previous_response_id;
    const previous =
      previousId && RESPONSE_ID.test(previousId)
        ? await findResponse(this.deps.db, account.accountId, previousId)
        : undefined;
    if (previousId && !previous) throw notFound(previousId);
    const messages = inputMessages(input.input);
    const history = previous?.history ?? [];
    const body = chatBody(input, history, messages);
    const echo: ResponseEcho = {
      id: newId('resp'),
      created_at: Math.floor(Date.now() / 1000),
      instructions: input.instructions ?? null,
      previous_response_id: input.previous_response_id ?? null,
      max_output_tokens: input.max_output_tokens ?? null,
      temperature: input.temperature ?? null,
      top_p: input.top_p ?? null,
      tools: input.tools ?? [],
      tool_choice: input.tool_choice ?? 'auto',
      store: input.store !== false,
      metadata: input.metadata ?? {},
    };
    const store = (model: string, output: readonly OutputItem[], response: JsonObject) =>
      echo.store
        ? insertResponse(this.deps.db, {
            id: echo.id,
            accountId: account.accountId,
            modelId: model,
            history: [...history, ...messages, ...outputMessages(output)],
            response,
          })
        : Promise.resolve();
    const outcome = await this.deps.chat.create(auth, body, { signal: options.signal });
    if (!outcome.stream) {
      const { completion, charge } = outcome.result;
      const output = outputOf(completion);
      const status = completion.choices[0]?.finish_reason === 'length' ? 'incomplete' : 'completed';
      const response = responseObject(echo, completion.model, status, output, { usage: completion.usage });
      await store(completion.model, output, response);
      return { stream: false, response, charge };
    }
    const session = outcome.session;
    const logger = this.deps.logger;
    async function* events(): AsyncGenerator<JsonObject> {
      let writer: ResponseEventStream | undefined;
      for await (const event of session) {
        if (event.type === 'error') {
          const error: AppError = event.error;
          writer ??= new ResponseEventStream(echo, body.model);
          yield writer.failed({ code: error.code, message: error.message });
          return;
        }
        const chunk = event.chunk;
        if (!writer) {
          writer = new ResponseEventStream(echo, chunk.model);
          yield* writer.start();
        }
        if (chunk.usage) {
          const { events: closing, response } = writer.finish(chunk.usage);
          try {
            await store(chunk.model, writer.items, response);
          } catch (error) {
            logger.error({ err: error, response: echo.id }, 'could not store a streamed response');
          }
          yield* closing;
          return;
        }
        yield* writer.chunk(chunk);
      }
      // Ended without a usage chunk (nothing was billed for it to report): closed all the same.
      if (writer) yield* writer.finish(undefined).events;
    }
    return { stream: true, events: events() };
  }

  /** GET /responses/{id}: a stored response of this account. */
  async get(auth: AuthContext, id: string): Promise<JsonObject> {
    const account = requireAccount(auth);
    const stored = RESPONSE_ID.test(id) ? await findResponse(this.deps.db, account.accountId, id) : undefined;
    if (!stored) throw notFound(id);
    return stored.response;
  }

  /** DELETE /responses/{id}. */
  async delete(auth: AuthContext, id: string): Promise<{ id: string; object: 'response'; deleted: true }> {
    const account = requireAccount(auth);
    if (!RESPONSE_ID.test(id) || !(await deleteResponse(this.deps.db, account.accountId, id))) throw notFound(id);
    return { id, object: 'response', deleted: true };
  }
}
