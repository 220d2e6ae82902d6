import { afterAll, beforeAll, beforeEach } from 'vitest';
import { chatAccount, startChatServer, writeOperatorConfig, upstreamOperatorConfig, type ChatServer } from './chat.ts';
import { startOpenAIUpstream, type OpenAIUpstream } from './openai-upstream.ts';
import { startSearxng, type FakeUpstream } from './search-upstreams.ts';

export type UpstreamMessage = { role: string; content: unknown };

export interface UpstreamChat {
  upstream: OpenAIUpstream;
  searxng: FakeUpstream;
  server: ChatServer;
  account: Awaited<ReturnType<typeof chatAccount>>;
  /** The body of the last chat request the upstream received. */
  lastBody(): { model: string; messages: UpstreamMessage[] } & Record<string, unknown>;
}

/**
 * For a test file of chat completions against a fake OpenAI-compatible upstream declared in the operator config
 * (test/rest/chat-upstream*.test.ts): the upstream, a SearXNG fake, the server and a funded account, made once for
 * the file; the upstream goes back to plain replies before each test.
 */
export function useUpstreamChat(): UpstreamChat {
  const state = {
    lastBody: () => state.upstream.chatRequests().at(-1)!.body as ReturnType<UpstreamChat['lastBody']>,
  } as UpstreamChat;
  let config: Awaited<ReturnType<typeof writeOperatorConfig>>;
  beforeAll(async () => {
    [state.upstream, state.searxng] = await Promise.all([startOpenAIUpstream(), startSearxng()]);
    config = await writeOperatorConfig(upstreamOperatorConfig(state.upstream.url, { searxngUrl: state.searxng.url }));
    state.server = await startChatServer({ LAGOON_CONFIG: config.path });
    state.account = await chatAccount(state.server, '10');
  });
  afterAll(async () => {
    await state.server?.close();
    await Promise.all([state.upstream?.close(), state.searxng?.close(), config?.remove()]);
  });
  beforeEach(() => state.upstream.setBehavior({ kind: 'reply' }));
  return state;
}
