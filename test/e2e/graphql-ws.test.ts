import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { testDatabaseKind } from '../helpers/db.ts';
import { viaGraphqlWs } from '../helpers/graphql-subscriptions.ts';
import { runCliProcess, serverStorage, startServer, type ServerProcess } from '../helpers/server-process.ts';
import { expectStillServing } from '../helpers/still-serving.ts';
import { scaled } from '../helpers/time-scale.ts';

const ADMIN = 'e2e-graphql-ws-admin-key';
const CHAT = `subscription {
  chatCompletionStream(input: { model: "lagoon-sim-chat", messages: [{ role: USER, content: "Hello" }], maxCompletionTokens: 4 }) { __typename }
}`;

/** A raw socket speaking (or not) graphql-ws's protocol; resolves with the close code the server chose. */
function closeCodeAfter(url: string, send: (socket: WebSocket) => void): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, 'graphql-transport-ws');
    socket.on('open', () => send(socket));
    socket.on('close', (code) => resolve(code));
    socket.on('error', reject);
  });
}

/**
 * GraphQL over WebSocket (graphql-ws on /graphql) against the server process `npm start` runs: the credential in
 * the upgrade request or in `connection_init`, the document limits and the introspection policy as on HTTP, frames
 * that are not the protocol's, and the sockets closed by a shutdown. The subscriptions' auth matrix over this
 * transport is in test/e2e/graphql-subscriptions.test.ts.
 */
describe(`GraphQL over WebSocket, server process (${testDatabaseKind})`, () => {
  let server: ServerProcess;
  let removeStorage: () => Promise<void>;
  let wsUrl: string;
  const admin = { authorization: `Bearer ${ADMIN}` };

  beforeAll(async () => {
    const storage = await serverStorage('lagoon-graphql-ws-e2e-');
    removeStorage = storage.remove;
    const env = {
      ...storage.env,
      LAGOON_BOOTSTRAP_ADMIN_KEY: ADMIN,
      GRAPHQL_MAX_DEPTH: '4',
      LAGOON_GRAPHQL_INTROSPECTION: 'authenticated',
      LAGOON_SHUTDOWN_TIMEOUT_SECONDS: '1',
    };
    server = await startServer(env);
    const credit = await runCliProcess(
      ['accounts', 'credit', '--key', ADMIN, '--currency', 'USD', '--amount', '5'],
      env,
    );
    expect(credit.code, credit.stderr).toBe(0);
    wsUrl = `${server.url.replace(/^http/, 'ws')}/graphql`;
  }, scaled(120_000));

  afterAll(async () => {
    if (server && server.child.exitCode === null) await server.stop();
    await removeStorage?.();
  });

  it('should stream a chat with the key in connection_init or in the upgrade request', async () => {
    for (const via of ['payload', 'upgrade'] as const) {
      const outcome = await viaGraphqlWs(server.url, CHAT, admin, 20_000, via);
      expect(outcome, `${via}: ${JSON.stringify(outcome)}`).toMatchObject({
        kind: 'data',
        data: { chatCompletionStream: {} },
      });
    }
  });

  it('should refuse a wrong key at the connection, and a subscription without one', async () => {
    const wrong = { authorization: 'Bearer lagoon_this-is-not-a-key-0000000000000000000' };
    for (const via of ['payload', 'upgrade'] as const) {
      expect(await viaGraphqlWs(server.url, CHAT, wrong, 20_000, via), via).toMatchObject({
        kind: 'refused',
        status: 403,
      });
    }
    const anonymous = await viaGraphqlWs(server.url, CHAT, {}, 20_000);
    expect(anonymous.kind).toBe('error');
  });

  it('should refuse a document over the limits, and introspection without a key', async () => {
    const deep = await viaGraphqlWs(server.url, '{ account { balances { currency } } }', admin, 20_000);
    expect(deep.kind, JSON.stringify(deep)).toBe('data');
    const tooDeep = '{ a: __type(name: "Query") { fields { type { fields { type { name } } } } } }';
    const refused = await viaGraphqlWs(server.url, tooDeep, admin, 20_000);
    expect(refused).toMatchObject({ kind: 'error', errors: [{ message: expect.stringMatching(/depth/i) }] });
    const introspection = '{ __schema { queryType { name } } }';
    expect(await viaGraphqlWs(server.url, introspection, admin, 20_000)).toMatchObject({ kind: 'data' });
    expect(await viaGraphqlWs(server.url, introspection, {}, 20_000)).toMatchObject({
      kind: 'error',
      errors: [{ message: expect.stringMatching(/Introspection needs an API key/) }],
    });
  });

  it('should close a socket that sends what is not the protocol, and keep serving', async () => {
    expect(await closeCodeAfter(wsUrl, (socket) => socket.send('{ not json'))).toBe(4400);
    expect(await closeCodeAfter(wsUrl, (socket) => socket.send('{"type":"nonsense"}'))).toBe(4400);
    const huge = JSON.stringify({ type: 'connection_init', payload: { pad: 'x'.repeat(26_000_000) } });
    expect(await closeCodeAfter(wsUrl, (socket) => socket.send(huge))).toBe(1009);
    const subscribeFirst = JSON.stringify({ id: '1', type: 'subscribe', payload: { query: '{ models { id } }' } });
    expect(await closeCodeAfter(wsUrl, (socket) => socket.send(subscribeFirst))).toBe(4401);
    expect(server.child.exitCode).toBeNull();
    await expectStillServing(server.url);
    expect(await viaGraphqlWs(server.url, '{ models { id } }', {}, 20_000)).toMatchObject({ kind: 'data' });
  });

  it('should close the open sockets when the server shuts down', { timeout: scaled(60_000) }, async () => {
    const closed = new Promise<number>((resolve) => {
      const client = createClient({
        url: wsUrl,
        webSocketImpl: WebSocket,
        connectionParams: admin,
        retryAttempts: 0,
        on: { closed: (event) => resolve((event as { code: number }).code) },
      });
      // usageUpdated stays open until a charge: the socket is still open when the server stops.
      client.subscribe(
        { query: 'subscription { usageUpdated { __typename } }' },
        { next() {}, error() {}, complete() {} },
      );
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const exit = server.stop();
    expect(await closed).toBe(1001);
    expect(await exit).toBe(0);
  });
});
