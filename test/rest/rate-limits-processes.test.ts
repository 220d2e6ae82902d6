import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator } from '../../src/auth/auth-context.ts';
import { startRpcTestApp, type RpcTestApp } from '../helpers/crypto-rpc.ts';
import { testDatabaseKind } from '../helpers/db.ts';

/* Two API processes on one database: with REDIS_URL a key's limits are counted once for both, else per process. */

const sharedThrough = process.env.REDIS_URL ? 'Redis' : 'process memory';

describe(`REST rate limits across two processes (${testDatabaseKind}, counters in ${sharedThrough})`, () => {
  let first: RpcTestApp;
  let second: RpcTestApp;

  beforeAll(async () => {
    first = await startRpcTestApp('rateLimits: {}');
    second = await startRpcTestApp('rateLimits: {}', {}, first.app.database);
  });
  afterAll(async () => {
    await second.close();
    await first.close();
  });

  it(`admits a key's RPM once across both processes when they share Redis (now: ${sharedThrough})`, async () => {
    const account = await first.account('5');
    const auth = await first.app.services.auth.authenticate({ authorization: `Bearer ${account.secret}` }, 't');
    if (auth.kind !== 'apiKey') throw new Error('expected a key');
    await first.app.services.apiKeys.setRateLimits(operator(), { id: auth.apiKey.id }, { rpm: 4 });
    const chat = (app: RpcTestApp) =>
      app.fetch('/api/v1/chat/completions', {
        method: 'POST',
        key: account.secret,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'lagoon-sim-chat', messages: [{ role: 'user', content: 'Hi' }] }),
      });
    const responses = await Promise.all(Array.from({ length: 12 }, (_, i) => chat(i % 2 === 0 ? first : second)));
    await Promise.all(responses.map((response) => response.arrayBuffer()));
    const served = responses.filter((response) => response.status === 200).length;
    const refused = responses.filter((response) => response.status === 429).length;
    expect(served + refused).toBe(12);
    // Shared counters: 4 in all. Per process (no Redis): 4 in each.
    expect(served).toBe(process.env.REDIS_URL ? 4 : 8);
  });
});
