import { createServer, type Server } from 'node:http';
import OpenAI from 'openai';
import { parseAtto } from '../../src/billing/money.ts';
import { createTestApp, type TestApp } from './app.ts';
import { createAccountWithKey } from './services.ts';
import type { UsageEntryWire } from './billing.ts';
import { listenLocally } from './local-server.ts';
import { scaled } from './time-scale.ts';

/** Lagoon on a real port (the `openai` client and graphql-sse talk HTTP), on a fresh test database. */
export interface ChatServer {
  readonly t: TestApp;
  /** http://127.0.0.1:PORT */
  readonly url: string;
  close(): Promise<void>;
}

export async function startChatServer(env: Record<string, string> = {}): Promise<ChatServer> {
  const t = await createTestApp(env);
  // The listener `npm start` serves with: the chat route on Node's own objects, every other route through fetch.
  const server: Server = createServer(t.app.nodeListener);
  const listening = await listenLocally(server);
  // As src/main.ts does: the default wallet sign-in domains name the port the server bound.
  t.app.listening(Number(new URL(listening.url).port));
  return {
    t,
    url: listening.url,
    async close() {
      await listening.close();
      await t.close();
    },
  };
}

/** A funded account seen through the `openai` client, with its balance and usage entries. */
export async function chatAccount(server: ChatServer, usd = '5') {
  const { secret, adminSecret, accountId } = await createAccountWithKey(server.t.app.services, {
    credit: usd === '0' ? {} : { USD: usd },
    type: 'INFERENCE',
  });
  const client = new OpenAI({
    apiKey: secret,
    baseURL: `${server.url}/api/v1`,
    maxRetries: 0,
    timeout: 20_000,
    fetch: recordingFetch,
  });
  const usd$ = async () =>
    (await server.t.app.services.billing.balancesOf(accountId)).find((b) => b.currency === 'USD')!;
  return {
    secret,
    adminSecret,
    accountId,
    client,
    /** USD balance and what running requests hold, in nano-USD. */
    balance: usd$,
    /** The usage entries of one request (GET /api/v1/billing/usage with the account's ADMIN key), by sku. */
    async entries(requestId: string): Promise<UsageEntryWire[]> {
      const response = await fetch(`${server.url}/api/v1/billing/usage?limit=500`, {
        headers: { authorization: `Bearer ${adminSecret}` },
      });
      const page = (await response.json()) as { data: UsageEntryWire[] };
      return page.data
        .filter((entry) => entry.inferenceDetails?.requestId === requestId)
        .sort((a, b) => a.sku.localeCompare(b.sku));
    },
    async allEntries(): Promise<UsageEntryWire[]> {
      const response = await fetch(`${server.url}/api/v1/billing/usage?limit=500`, {
        headers: { authorization: `Bearer ${adminSecret}` },
      });
      return ((await response.json()) as { data: UsageEntryWire[] }).data;
    },
  };
}

/** Completion id → the X-Request-ID of the response that carried it, as seen by {@link recordingFetch}. */
const requestIds = new Map<string, string>();

/**
 * `fetch` that notes which request id (X-Request-ID) answered each completion id: a completion's id is its own
 * random id, while usage entries carry the request id. Reads a copy of the body (a JSON body, or the SSE stream as
 * it goes), so the caller sees the response unchanged.
 */
export const recordingFetch: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  const requestId = response.headers.get('x-request-id');
  if (!requestId || !response.body) return response;
  const [mine, theirs] = response.body.tee();
  void (async () => {
    const decoder = new TextDecoder();
    let text = '';
    const reader = mine.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      const match = /"id":"(chatcmpl-[0-9a-f]+)"/.exec(text);
      if (match) {
        requestIds.set(match[1]!, requestId);
        // One id per response; stop reading so a caller that cancels its copy still ends the request.
        await reader.cancel();
        break;
      }
    }
  })().catch(() => undefined);
  return new Response(theirs, { status: response.status, statusText: response.statusText, headers: response.headers });
};

/** The request id (X-Request-ID) that answered a completion, through {@link recordingFetch}. */
export function requestIdOf(completionId: string): string {
  const requestId = requestIds.get(completionId);
  if (requestId === undefined) throw new Error(`No response seen for completion ${completionId}; use recordingFetch`);
  return requestId;
}

/**
 * What tokens cost at a price per 1M tokens (a decimal string), in nano-USD, rounded up per line: computed here
 * from first principles (tokens × price / 10^6, in atto then nano) rather than with the service's own helpers.
 */
export function tokenCostNano(tokens: number, usdPerMillion: string): bigint {
  const atto = BigInt(tokens) * parseAtto(usdPerMillion); // atto-USD × 10^6
  const divisor = 1_000_000n * 1_000_000_000n; // per-million, then atto → nano
  return (atto + divisor - 1n) / divisor;
}

/** Reads an SSE body into its `data:` payloads (JSON-parsed, `[DONE]` kept as the string). */
export async function readSse(response: Response): Promise<unknown[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => {
      const data = block.slice('data: '.length);
      return data === '[DONE]' ? data : (JSON.parse(data) as unknown);
    });
}

/** Prices of the upstream-backed test models (USD per 1M tokens), as the operator config below declares them. */
export const UPSTREAM_PRICES = {
  'up-chat': { input: '0.7', output: '2.8', cacheRead: '0.35' },
  'up-basic': { input: '1', output: '3' },
  'up-multi': { input: '0.2', output: '0.6' },
  'up-think': { input: '1.1', output: '4.4', extended: { threshold: 100, input: '2.2', output: '8.8' } },
} as const;

export const OPERATOR_SYSTEM_PROMPT = 'Operator policy: answer kindly and never share secrets.';
export const SAGE_PROMPT = 'You are the Test Sage. You answer in riddles.';

/**
 * An operator config (YAML) pointing models at a fake OpenAI-compatible upstream (`test-model`, `basic-model`,
 * …) and, when given, a fake SearXNG for web search; with a character and an operator system prompt.
 */
export function upstreamOperatorConfig(
  upstreamUrl: string,
  options: { searxngUrl?: string; timeoutMs?: number; idleTimeoutMs?: number } = {},
): string {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const providerOptions = options.idleTimeoutMs ? `, options: { idleTimeoutMs: ${options.idleTimeoutMs} }` : '';
  return [
    'providers:',
    `  - { id: fake, type: openai-compatible, baseUrl: "${upstreamUrl}", timeoutMs: ${timeoutMs}, maxRetries: 0${providerOptions} }`,
    ...(options.searxngUrl
      ? [`  - { id: searx, type: searxng, baseUrl: "${options.searxngUrl}", timeoutMs: 2000, maxRetries: 0 }`]
      : []),
    'models:',
    '  - id: up-chat',
    '    type: text',
    '    name: Upstream Chat',
    '    traits: [default]',
    '    contextLength: 8192',
    '    capabilities: { supportsFunctionCalling: true, supportsResponseSchema: true, supportsVision: true, supportsWebSearch: true, supportsLogProbs: true }',
    '    provider: fake',
    '    upstreamModel: test-model',
    '    pricing: { input: { usd: 0.7 }, output: { usd: 2.8 }, cache_input: { usd: 0.35 } }',
    '  - id: up-basic',
    '    type: text',
    '    name: Upstream Basic',
    '    contextLength: 4096',
    '    provider: fake',
    '    upstreamModel: basic-model',
    '    pricing: { input: { usd: 1 }, output: { usd: 3 } }',
    '  - id: up-multi',
    '    type: text',
    '    name: Upstream Multi-image',
    '    capabilities: { supportsVision: true, supportsMultipleImages: true, maxImages: 2 }',
    '    provider: fake',
    '    upstreamModel: multi-model',
    '    pricing: { input: { usd: 0.2 }, output: { usd: 0.6 } }',
    '  - id: up-think',
    '    type: text',
    '    name: Upstream Thinker',
    '    traits: [default_reasoning]',
    '    capabilities: { supportsReasoning: true, supportsReasoningEffort: true }',
    '    provider: fake',
    '    upstreamModel: think-model',
    '    pricing:',
    '      input: { usd: 1.1 }',
    '      output: { usd: 4.4 }',
    '      extended: { context_token_threshold: 100, input: { usd: 2.2 }, output: { usd: 8.8 } }',
    'compatibilityMappings:',
    '  text: { gpt-4o: up-chat, gpt-4o-mini: up-basic }',
    'characters:',
    '  - slug: test-sage',
    '    name: Test Sage',
    '    modelId: up-think',
    `    systemPrompt: "${SAGE_PROMPT}"`,
    'chat:',
    `  systemPrompt: "${OPERATOR_SYSTEM_PROMPT}"`,
  ].join('\n');
}

/** Writes `yaml` to a new temporary operator config file; returns its path and a cleanup. */
export async function writeOperatorConfig(yaml: string): Promise<{ path: string; remove(): Promise<void> }> {
  const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = await mkdtemp(join(tmpdir(), 'lagoon-chat-'));
  const path = join(dir, 'operator.yaml');
  await writeFile(path, yaml);
  return { path, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Polls until `check` holds (settlement after a disconnect happens in the background), at most `ms`. */
export async function eventually(check: () => Promise<boolean>, ms = 5_000): Promise<void> {
  const deadline = Date.now() + scaled(ms);
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
