import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { listenLocally } from './local-server.ts';
import { scaled } from './time-scale.ts';

/*
 * A fake OpenAI-compatible upstream (what vLLM, llama.cpp server, Ollama and OpenAI speak) on 127.0.0.1:<port 0>,
 * for tests and the gateway benchmark:
 * - POST {url}/chat/completions: a JSON completion, or with `stream: true` an SSE stream of
 *   `chat.completion.chunk`s (`data: <json>\n\n` … `data: [DONE]\n\n`), with a usage chunk when the request asks
 *   for `stream_options.include_usage` (as OpenAI and vLLM do).
 * - GET {url}/models: `{object: "list", data: [{id, object: "model", created, owned_by}]}`.
 * `url` ends in `/v1`, like a real base URL. Every request is recorded (method, path, headers, parsed body,
 * whether the client went away before the answer ended). `setBehavior` changes the answer of every following
 * chat request; `queue` answers the next ones with one-off behaviours first (failures, slowness), in order.
 */

export interface FakeToolCall {
  readonly id?: string;
  readonly name: string;
  /** The JSON arguments string, sent as-is. */
  readonly arguments: string;
}

export interface FakeUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  /** Sent as `prompt_tokens_details.cached_tokens`. */
  readonly cached_tokens?: number;
}

/** A normal answer. Every field is optional; the defaults give a short plain reply with usage. */
export interface FakeReply {
  /** The assistant text (may contain inline `<think>…</think>`); null for a tool-call-only answer. */
  readonly content?: string | null;
  /** Reasoning text, sent in `reasoning_content` (or in `reasoning` with reasoningField: 'reasoning'). */
  readonly reasoning?: string;
  readonly reasoningField?: 'reasoning_content' | 'reasoning';
  readonly toolCalls?: readonly FakeToolCall[];
  /** null: no usage at all (neither in the body nor as a stream usage chunk). */
  readonly usage?: FakeUsage | null;
  /** Sent as the choice's `logprobs` (non-streaming: whole; streaming: on the first content chunk). */
  readonly logprobs?: Record<string, unknown>;
  readonly finishReason?: string;
  readonly stopReason?: string | number | null;
  /** Streaming: the content pieces, one per chunk (default: the content split after each space). */
  readonly chunks?: readonly string[];
  /** Streaming: the pieces of the reasoning text (default: one chunk), sent before the content. */
  readonly reasoningChunks?: readonly string[];
  /** Streaming: a pause before every chunk after the first. */
  readonly chunkDelayMs?: number;
  /** Streaming: after this many content chunks, pause `pauseMs` (before the next one). */
  readonly pauseAfterChunks?: number;
  readonly pauseMs?: number;
  /** Streaming: after this many content chunks (and the pause, if any), destroy the connection. */
  readonly breakAfterChunks?: number;
  /** Streaming: after this many content chunks, stop sending and keep the connection open until the client leaves. */
  readonly holdAfterChunks?: number;
}

export type FakeBehavior =
  | ({ readonly kind: 'reply' } & FakeReply)
  /** An HTTP error with a JSON body (default OpenAI's `{error: {message, type, code}}` shape). */
  | { readonly kind: 'status'; readonly status: number; readonly body?: unknown; readonly message?: string }
  /** Sends nothing for `ms` (the client should time out first), then a normal reply. */
  | { readonly kind: 'delay'; readonly ms: number }
  /** Sends nothing until `until` settles (the test decides when, whatever the machine's speed), then a normal reply. */
  | { readonly kind: 'gate'; readonly until: Promise<unknown> }
  /** Destroys the socket before sending any header. */
  | { readonly kind: 'reset' }
  /** 200 with a body that is not JSON (non-streaming) / SSE whose data is not JSON (streaming). */
  | { readonly kind: 'malformed' }
  /** Full control: writes whatever the function wants. */
  | {
      readonly kind: 'custom';
      readonly handle: (request: IncomingMessage, response: ServerResponse, body: ChatRequestBody) => void;
    };

export type ChatRequestBody = Record<string, unknown>;

export interface RecordedUpstreamRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The parsed JSON body (empty object for a GET or a body that is not JSON). */
  readonly body: ChatRequestBody;
  /** True once the client closed the connection before the answer was complete. */
  clientAborted: boolean;
  /** The client's port: equal ports on two requests mean the connection was reused (keep-alive). */
  readonly remotePort: number | undefined;
}

export interface OpenAIUpstreamOptions {
  /** The ids served by GET /models (default ['test-model']). */
  readonly models?: readonly string[];
  /** The initial chat behaviour (default: a normal reply). */
  readonly behavior?: FakeBehavior;
  /** A fixed latency before every answer's headers (the benchmark's "20 ms upstream"). */
  readonly latencyMs?: number;
  /** When set, requests without `Authorization: Bearer <apiKey>` get 401. */
  readonly apiKey?: string;
}

export interface OpenAIUpstream {
  /** The base URL, ending in /v1 (as an operator would configure it). */
  readonly url: string;
  readonly requests: RecordedUpstreamRequest[];
  /** Only the POST /chat/completions requests. */
  chatRequests(): RecordedUpstreamRequest[];
  setBehavior(behavior: FakeBehavior): void;
  /** One-off behaviours for the next chat requests, in order, before the set behaviour resumes. */
  queue(...behaviors: FakeBehavior[]): void;
  /** GET /models: the ids, or an HTTP status to fail with. */
  setModels(models: readonly string[] | { readonly status: number }): void;
  /** Resolves when a client closes a connection before its answer ended (checked since the start). */
  waitForClientAbort(timeoutMs?: number): Promise<RecordedUpstreamRequest>;
  close(): Promise<void>;
}

export const DEFAULT_REPLY_CONTENT = 'Hello from the test upstream.';
export const DEFAULT_USAGE: FakeUsage = { prompt_tokens: 12, completion_tokens: 7 };

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function startOpenAIUpstream(options: OpenAIUpstreamOptions = {}): Promise<OpenAIUpstream> {
  const requests: RecordedUpstreamRequest[] = [];
  const pending: FakeBehavior[] = [];
  const abortWaiters = new Set<(request: RecordedUpstreamRequest) => void>();
  let behavior: FakeBehavior = options.behavior ?? { kind: 'reply' };
  let models: readonly string[] | { readonly status: number } = options.models ?? ['test-model'];
  let sequence = 0;

  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
      let body: ChatRequestBody = {};
      try {
        const parsed: unknown = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as ChatRequestBody;
      } catch {
        body = {};
      }
      const record: RecordedUpstreamRequest = {
        method: request.method ?? '',
        path,
        headers: request.headers,
        body,
        clientAborted: false,
        remotePort: request.socket.remotePort,
      };
      requests.push(record);
      response.once('close', () => {
        if (response.writableFinished) return;
        record.clientAborted = true;
        for (const waiter of abortWaiters) waiter(record);
        abortWaiters.clear();
      });
      void answer(request, response, path, body).catch(() => response.destroy());
    });
  });

  async function answer(
    request: IncomingMessage,
    response: ServerResponse,
    path: string,
    body: ChatRequestBody,
  ): Promise<void> {
    if (options.apiKey !== undefined && request.headers.authorization !== `Bearer ${options.apiKey}`) {
      return sendJson(response, 401, {
        error: { message: 'Invalid API key', type: 'invalid_request_error', code: 'invalid_api_key' },
      });
    }
    if (request.method === 'GET' && path === '/v1/models') {
      if (options.latencyMs) await sleep(options.latencyMs);
      if (!Array.isArray(models))
        return sendJson(response, (models as { status: number }).status, { error: { message: 'models unavailable' } });
      const ids = models as readonly string[];
      return sendJson(response, 200, {
        object: 'list',
        data: ids.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'test' })),
      });
    }
    if (request.method !== 'POST' || path !== '/v1/chat/completions')
      return sendJson(response, 404, { error: { message: `No route ${path}` } });

    const current = pending.shift() ?? behavior;
    if (options.latencyMs) await sleep(options.latencyMs);
    sequence += 1;
    const id = `chatcmpl-fake-${sequence}`;
    switch (current.kind) {
      case 'status':
        return sendJson(
          response,
          current.status,
          current.body ?? {
            error: {
              message: current.message ?? `upstream failure ${current.status}`,
              type: 'invalid_request_error',
              param: null,
              code: null,
            },
          },
        );
      case 'delay':
        await sleep(current.ms);
        if (response.destroyed) return;
        return reply(response, body, id, {});
      case 'gate':
        await current.until.catch(() => undefined);
        if (response.destroyed) return;
        return reply(response, body, id, {});
      case 'reset':
        request.socket.destroy();
        return;
      case 'malformed':
        if (body.stream === true) {
          response.writeHead(200, { 'content-type': 'text/event-stream' });
          response.end('data: {"id": "x", "choices": [{"delta": {"content": "Hi"}, oops\n\n');
        } else {
          response.writeHead(200, { 'content-type': 'application/json' }).end('{"id": "x", "choices": [');
        }
        return;
      case 'custom':
        return current.handle(request, response, body);
      case 'reply':
        return reply(response, body, id, current);
    }
  }

  const listening = await listenLocally(server);
  return {
    url: `${listening.url}/v1`,
    requests,
    chatRequests: () => requests.filter((request) => request.path === '/v1/chat/completions'),
    setBehavior: (next) => {
      behavior = next;
    },
    queue: (...more) => pending.push(...more),
    setModels: (next) => {
      models = next;
    },
    waitForClientAbort: (timeoutMs = 5000) => {
      const already = requests.find((request) => request.clientAborted);
      if (already) return Promise.resolve(already);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          abortWaiters.delete(done);
          reject(new Error(`no client abort within ${timeoutMs} ms`));
        }, scaled(timeoutMs));
        function done(request: RecordedUpstreamRequest) {
          clearTimeout(timer);
          resolve(request);
        }
        abortWaiters.add(done);
      });
    },
    close: listening.close,
  };
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function usageJson(usage: FakeUsage) {
  return {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
    ...(usage.cached_tokens === undefined ? {} : { prompt_tokens_details: { cached_tokens: usage.cached_tokens } }),
  };
}

function toolCallsJson(reply: FakeReply, sequence: string) {
  return (reply.toolCalls ?? []).map((call, index) => ({
    id: call.id ?? `call_${sequence}_${index}`,
    type: 'function' as const,
    function: { name: call.name, arguments: call.arguments },
  }));
}

async function reply(response: ServerResponse, body: ChatRequestBody, id: string, spec: FakeReply): Promise<void> {
  const model = typeof body.model === 'string' ? body.model : 'unknown';
  const created = Math.floor(Date.now() / 1000);
  const choiceCount = typeof body.n === 'number' && body.n > 1 ? body.n : 1;
  const content = spec.content === undefined ? DEFAULT_REPLY_CONTENT : spec.content;
  const usage = spec.usage === undefined ? DEFAULT_USAGE : spec.usage;
  const toolCalls = toolCallsJson(spec, id.replace('chatcmpl-fake-', ''));
  const finishReason = spec.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop');
  const reasoningField = spec.reasoningField ?? 'reasoning_content';

  if (body.stream !== true) {
    const choices = Array.from({ length: choiceCount }, (_, index) => ({
      index,
      message: {
        role: 'assistant',
        content,
        ...(spec.reasoning === undefined ? {} : { [reasoningField]: spec.reasoning }),
        ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
      },
      logprobs: spec.logprobs ?? null,
      finish_reason: finishReason,
      ...(spec.stopReason === undefined ? {} : { stop_reason: spec.stopReason }),
    }));
    return sendJson(response, 200, {
      id,
      object: 'chat.completion',
      created,
      model,
      choices,
      ...(usage ? { usage: usageJson(usage) } : {}),
    });
  }

  const streamOptions = body.stream_options as { include_usage?: unknown } | undefined;
  const includeUsage = streamOptions?.include_usage === true;
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  const send = (choices: unknown[], extra: Record<string, unknown> = {}) => {
    if (!response.destroyed)
      response.write(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices, ...extra })}\n\n`,
      );
  };
  const everyChoice = (delta: Record<string, unknown>, more: Record<string, unknown> = {}) =>
    Array.from({ length: choiceCount }, (_, index) => ({ index, delta, logprobs: null, finish_reason: null, ...more }));

  let sent = 0;
  const pauseBetween = async () => {
    if (sent > 0 && spec.chunkDelayMs) await sleep(spec.chunkDelayMs);
    sent += 1;
  };
  await pauseBetween();
  send(everyChoice({ role: 'assistant', content: '' }));
  for (const piece of spec.reasoningChunks ?? (spec.reasoning === undefined ? [] : [spec.reasoning])) {
    await pauseBetween();
    send(everyChoice({ [reasoningField]: piece }));
  }
  const pieces = spec.chunks ?? (content ? content.split(/(?<= )/) : []);
  for (let index = 0; index < pieces.length; index += 1) {
    if (spec.holdAfterChunks === index) return; // the client's disconnect ends it (recorded as clientAborted)
    if (spec.pauseAfterChunks === index && spec.pauseMs) await sleep(spec.pauseMs);
    if (spec.breakAfterChunks === index) {
      response.destroy();
      return;
    }
    await pauseBetween();
    if (response.destroyed) return;
    send(everyChoice({ content: pieces[index] }, index === 0 && spec.logprobs ? { logprobs: spec.logprobs } : {}));
  }
  if (spec.holdAfterChunks !== undefined && spec.holdAfterChunks >= pieces.length) return;
  if (spec.pauseAfterChunks !== undefined && spec.pauseAfterChunks >= pieces.length && spec.pauseMs)
    await sleep(spec.pauseMs);
  if (spec.breakAfterChunks !== undefined && spec.breakAfterChunks >= pieces.length) {
    response.destroy();
    return;
  }
  for (const [callIndex, call] of toolCalls.entries()) {
    await pauseBetween();
    // The name first, the arguments in two fragments: how vLLM and OpenAI stream a tool call.
    send(
      everyChoice({
        tool_calls: [
          { index: callIndex, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } },
        ],
      }),
    );
    const half = Math.ceil(call.function.arguments.length / 2);
    for (const fragment of [call.function.arguments.slice(0, half), call.function.arguments.slice(half)]) {
      if (fragment) send(everyChoice({ tool_calls: [{ index: callIndex, function: { arguments: fragment } }] }));
    }
  }
  await pauseBetween();
  send(
    everyChoice(
      {},
      { finish_reason: finishReason, ...(spec.stopReason === undefined ? {} : { stop_reason: spec.stopReason }) },
    ),
  );
  if (includeUsage && usage) send([], { usage: usageJson(usage) });
  if (!response.destroyed) response.end('data: [DONE]\n\n');
}
