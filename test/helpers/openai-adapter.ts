import { afterAll, afterEach, beforeAll } from 'vitest';
import type {
  UpstreamChatChunk,
  UpstreamChatRequest,
  UpstreamChatStream,
} from '../../src/providers/chat/chat-engine.ts';
import {
  OpenAICompatibleEngine,
  type OpenAICompatibleSettings,
} from '../../src/providers/chat/openai-compatible.engine.ts';
import { startOpenAIUpstream, type OpenAIUpstream } from './openai-upstream.ts';

/** Shared by the OpenAICompatibleEngine tests (test/providers/openai-compatible*.test.ts). */
export const request = (extra: Record<string, unknown> = {}): UpstreamChatRequest => ({
  model: 'up-model',
  messages: [{ role: 'user', content: 'Hi there' }],
  ...extra,
});

export async function collect(stream: UpstreamChatStream): Promise<UpstreamChatChunk[]> {
  const chunks: UpstreamChatChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

export const contentOf = (chunks: UpstreamChatChunk[]) =>
  chunks.flatMap((c) => c.choices.map((choice) => choice.delta.content ?? '')).join('');
export const reasoningOf = (chunks: UpstreamChatChunk[]) =>
  chunks.flatMap((c) => c.choices.map((choice) => choice.delta.reasoning_content ?? '')).join('');

export async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

/**
 * A fake upstream for the file (reset to plain replies after each test) and a factory of adapters pointed at it,
 * all closed after the file. Call at the top level of a test file.
 */
export function useAdapterUpstream(): {
  readonly upstream: OpenAIUpstream;
  adapter(settings?: Partial<OpenAICompatibleSettings>): OpenAICompatibleEngine;
} {
  const adapters: OpenAICompatibleEngine[] = [];
  const state = {
    upstream: undefined as unknown as OpenAIUpstream,
    adapter(settings: Partial<OpenAICompatibleSettings> = {}) {
      const created = new OpenAICompatibleEngine('test-upstream', {
        baseUrl: state.upstream.url,
        apiKey: 'sk-upstream',
        timeoutMs: 2_000,
        headers: { 'x-operator': 'acme' },
        ...settings,
      });
      adapters.push(created);
      return created;
    },
  };
  beforeAll(async () => {
    state.upstream = await startOpenAIUpstream({ models: ['meta-llama/Llama-3.3-70B-Instruct', 'qwen2.5:7b'] });
  });
  afterEach(() => {
    state.upstream.setBehavior({ kind: 'reply' });
    state.upstream.requests.length = 0;
  });
  afterAll(async () => {
    await Promise.all(adapters.map((a) => a.close()));
    await state.upstream.close();
  });
  return state;
}
