import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AuthContext } from '../../src/auth/auth-context.ts';
import { startChatServer, type ChatServer } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { viaGraphqlSse, viaYoga } from '../helpers/graphql-subscriptions.ts';
import { newWallet, signInHeader } from '../helpers/wallets.ts';

const SIWE_DOMAIN = 'lagoon.test';

/**
 * A subscription whose stream throws something unexpected after it began: the client gets an error result with
 * the masked message, the failure is logged, and the server keeps serving, on both SSE transports.
 */
describe(`GraphQL subscription streams that throw (${testDatabaseKind})`, () => {
  let server: ChatServer;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    server = await startChatServer({ LAGOON_SIWE_DOMAINS: SIWE_DOMAIN });
    const wallets = server.t.app.services.wallets;
    // The balance stream answers once, then breaks the way a bug would.
    vi.spyOn(wallets, 'watchBalance').mockImplementation(async function* (auth: AuthContext) {
      if (auth.kind !== 'wallet') throw new Error('not a wallet');
      yield { walletAddress: auth.walletAddress, balanceUsd: '0', updatedAt: new Date() } as never;
      throw new TypeError('Cannot read properties of undefined (reading "balance")');
    });
  });
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    vi.restoreAllMocks();
    await server?.close();
  });

  for (const transport of ['/graphql', '/graphql/stream'] as const) {
    it(`should end the stream with a masked error result on ${transport}, logged`, async () => {
      const logged = vi.spyOn(server.t.app.logger, 'error');
      const headers = { 'SIGN-IN-WITH-X': await signInHeader(newWallet(), { domain: SIWE_DOMAIN }) };
      const events = await collect(transport, server.url, headers);
      expect(events[0]).toMatchObject({ data: { walletBalance: { balanceUsd: expect.any(String) } } });
      expect(events[1]).toEqual({
        data: null,
        errors: [expect.objectContaining({ message: 'Unexpected error.' })],
      });
      expect(events).toHaveLength(2);
      expect(logged.mock.calls.some(([entry]) => String((entry as { err?: unknown }).err).includes('reading'))).toBe(
        true,
      );
      expect(unhandled).toEqual([]);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      // The first answer alone goes through the helpers every other suite uses.
      expect(
        (await (transport === '/graphql' ? viaYoga : viaGraphqlSse)(server.url, QUERY, headers, 10_000)).kind,
      ).toBe('data');
    });
  }
});

const QUERY = 'subscription { walletBalance { balanceUsd } }';

/** Every result of the subscription until its stream ends. */
async function collect(transport: string, base: string, headers: Record<string, string>): Promise<unknown[]> {
  const response = await fetch(`${base}${transport}`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ query: QUERY }),
    signal: AbortSignal.timeout(20_000),
  });
  expect(response.status).toBe(200);
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => /^event: ?next$/m.test(block))
    .map((block) => JSON.parse(/^data: ?(.*)$/m.exec(block)![1]!) as unknown);
}
