import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServerAdapter } from '@whatwg-node/server';
import { createClient, type Client } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseNano } from '../../src/billing/money.ts';
import type { Services } from '../../src/services.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { scenarioAccount } from '../helpers/billing.ts';
import { testDatabaseKind } from '../helpers/db.ts';

const REDIS_URL = process.env.REDIS_URL || undefined;

interface UsageEvent {
  usageUpdated: {
    id: string;
    sku: string;
    amount: string;
    currency: string;
    apiKeyId: string | null;
    inferenceDetails: { requestId: string } | null;
  };
}

const SUBSCRIPTION = 'subscription { usageUpdated { id sku amount currency apiKeyId inferenceDetails { requestId } } }';

async function charge(services: Services, auth: Awaited<ReturnType<typeof scenarioAccount>>['admin'], sku: string) {
  const cost = { usd: parseNano('0.001'), diem: parseNano('0.001') };
  const { charge: settled } = await services.billing.runMetered(auth, {
    maxCost: cost,
    run: async () => undefined,
    usage: () => ({
      modelId: 'live-model',
      lines: [{ sku, units: '1', pricePerUnitUsd: '0.001', cost }],
      inferenceDetails: { requestId: `req-${sku}`, inferenceExecutionTime: 5 },
    }),
  });
  return settled;
}

describe(`GraphQL usageUpdated over SSE on a real server (${testDatabaseKind}, ${REDIS_URL ? 'Redis' : 'in-process'} events)`, () => {
  let t: TestApp;
  let server: Server;
  let url: string;
  const clients: Client[] = [];
  const client = (secret: string) => {
    const created = createClient({
      url: `${url}/graphql/stream`,
      headers: { authorization: `Bearer ${secret}` },
      fetchFn: fetch,
      retryAttempts: 0,
    });
    clients.push(created);
    return created;
  };

  beforeAll(async () => {
    t = await createTestApp(REDIS_URL ? { REDIS_URL } : {});
    server = createServer(createServerAdapter((request: Request) => t.app.fetch(request)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const c of clients) c.dispose();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await t.close();
  });

  it('should use the event bus the environment asks for', () => {
    expect(t.app.services.events.kind).toBe(REDIS_URL ? 'redis' : 'memory');
  });

  it('should push each settled usage entry of the caller’s account, and only those', async () => {
    const services = t.app.services;
    const alpha = await scenarioAccount(services, 'live-alpha');
    const beta = await scenarioAccount(services, 'live-beta');
    const events = client(alpha.adminSecret).iterate<UsageEvent['usageUpdated'] extends never ? never : UsageEvent>({
      query: SUBSCRIPTION,
    });
    const first = events.next();
    // The subscription is registered asynchronously: settle until the first entry arrives.
    let received: IteratorResult<{ data?: UsageEvent | null }> | undefined;
    void first.then((value) => (received = value));
    const sent: string[] = [];
    for (let attempt = 0; attempt < 40 && !received; attempt += 1) {
      const settled = await charge(services, alpha.admin, `warm-${attempt}`);
      sent.push(settled.usageEntryIds[0]!);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(received?.done).toBe(false);
    const firstEntry = received!.value.data!.usageUpdated;
    expect(sent).toContain(firstEntry.id);
    expect(firstEntry).toMatchObject({ amount: '-0.001', currency: 'DIEM', apiKeyId: alpha.adminKeyId });
    // Drain what the warm-up sent, then another account settles and alpha settles once more.
    for (let i = sent.indexOf(firstEntry.id) + 1; i < sent.length; i += 1)
      expect((await events.next()).value.data.usageUpdated.id).toBe(sent[i]);
    await charge(services, beta.admin, 'beta-only');
    const mine = await charge(services, alpha.inference, 'alpha-inference');
    const next = (await events.next()).value.data.usageUpdated;
    expect(next).toEqual({
      id: mine.usageEntryIds[0],
      sku: 'alpha-inference',
      amount: '-0.001',
      currency: 'DIEM',
      apiKeyId: alpha.inferenceKeyId,
      inferenceDetails: { requestId: 'req-alpha-inference' },
    });
    await events.return?.();
  });

  it('should refuse the subscription to an INFERENCE key, and a bad key with 401', async () => {
    const gamma = await scenarioAccount(t.app.services, 'live-gamma');
    const events = client(gamma.inferenceSecret).iterate({ query: SUBSCRIPTION });
    const refused = await events.next();
    expect(refused.value).toMatchObject({
      data: null,
      errors: [{ message: 'Admin API key required', extensions: { code: 'ADMIN_KEY_REQUIRED' } }],
    });
    expect((await events.next()).done).toBe(true);

    const response = await fetch(`${url}/graphql/stream`, {
      method: 'POST',
      headers: { authorization: 'Bearer not-a-key', 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: SUBSCRIPTION }),
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      errors: [{ message: expect.any(String), extensions: { code: 'AUTHENTICATION_FAILED' } }],
    });
  });
});
