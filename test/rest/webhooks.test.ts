import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { writeOperatorConfig } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { eventually } from '../helpers/eventually.ts';
import { createAccountWithKey } from '../helpers/services.ts';
import { scaled } from '../helpers/time-scale.ts';
import { startWebhookReceiver, type ReceivedHook } from '../helpers/webhook-receiver.ts';

/*
 * Account webhooks over HTTP (src/webhooks/): an endpoint registered with an ADMIN key gets a test event through a
 * receiver that first fails (500), then does not answer (the delivery times out), then accepts: three attempts with
 * the same webhook-id, each signature verified by the `standardwebhooks` package, the waits growing (exponential
 * backoff), every attempt listed with its status code. Loopback is reachable only because the operator file allows
 * 127.0.0.1 (chat.webScraping.allowNetworks), as an operator would for a test receiver.
 */

const TIMEOUT_MS = scaled(1_000);

interface Endpoint {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  secret?: string;
}

interface Delivery {
  id: string;
  eventId: string;
  eventType: string;
  status: string;
  url: string;
  attempts: { attempt: number; statusCode: number | null; error: string | null }[];
}

interface ErrorBody {
  code: string;
  issues?: { path: (string | number)[]; message: string }[];
}

describe(`REST webhooks (${testDatabaseKind})`, () => {
  let t: TestApp;
  let config: Awaited<ReturnType<typeof writeOperatorConfig>>;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let admin: string;
  let inference: string;
  let otherAdmin: string;

  const call = (path: string, init: { method?: string; body?: unknown; key?: string | null } = {}) =>
    t.call(`/api/v1${path}`, { key: admin, ...init });
  const create = async (body: unknown, key = admin) => {
    const response = await call('/webhooks', { body, key });
    return { status: response.status, body: (await response.json()) as { data: Endpoint } & ErrorBody };
  };
  const deliveries = async (query = '') => {
    const response = await call(`/webhooks/deliveries${query}`);
    expect(response.status).toBe(200);
    return ((await response.json()) as { data: Delivery[] }).data;
  };
  const verify = (secret: string, hook: ReceivedHook) =>
    new Webhook(secret).verify(hook.body, {
      'webhook-id': String(hook.headers['webhook-id']),
      'webhook-timestamp': String(hook.headers['webhook-timestamp']),
      'webhook-signature': String(hook.headers['webhook-signature']),
    });

  beforeAll(async () => {
    config = await writeOperatorConfig('chat:\n  webScraping: { allowNetworks: ["127.0.0.1"] }');
    // /retry: 500, then no answer, then 204. Every other path accepts at once.
    receiver = await startWebhookReceiver((nth, path) =>
      path === '/retry' ? (nth === 1 ? 'fail' : nth === 2 ? 'hang' : 'accept') : 'accept',
    );
    t = await createTestApp({
      LAGOON_CONFIG: config.path,
      LAGOON_JOB_WORKERS: 'true',
      LAGOON_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      LAGOON_WEBHOOK_FIRST_RETRY_SECONDS: '1',
      LAGOON_WEBHOOK_MAX_ENDPOINTS: '3',
    });
    const account = await createAccountWithKey(t.app.services, {
      credit: { USD: '10' },
      keyInput: { consumptionLimit: { usd: 0.02 } },
    });
    admin = account.adminSecret;
    inference = account.secret;
    otherAdmin = (await createAccountWithKey(t.app.services, { name: 'other' })).adminSecret;
  }, scaled(120_000));
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await config?.remove();
  });

  it(
    'should deliver a test event through a failure and a timeout, signed, retried with backoff, one id',
    async () => {
      const created = await create({ url: `${receiver.url}/retry`, events: ['job.completed'] });
      expect(created.status).toBe(200);
      const endpoint = created.body.data;
      expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
      expect(endpoint).toMatchObject({ url: `${receiver.url}/retry`, events: ['job.completed'], enabled: true });
      // The secret is shown once: neither the list nor the get form carries it.
      const listed = (await (await call('/webhooks')).json()) as { data: Endpoint[] };
      expect(listed.data.map((row) => row.id)).toEqual([endpoint.id]);
      expect(listed.data[0]).not.toHaveProperty('secret');

      const sent = await call(`/webhooks/${endpoint.id}/test`, { method: 'POST' });
      expect(sent.status).toBe(200);
      const delivery = ((await sent.json()) as { data: Delivery }).data;
      expect(delivery).toMatchObject({ eventType: 'webhook.test', status: 'PENDING' });

      await eventually(async () => expect(receiver.at('/retry')).toHaveLength(3), 30_000);
      const [first, second, third] = receiver.at('/retry') as [ReceivedHook, ReceivedHook, ReceivedHook];
      for (const hook of [first, second, third]) {
        expect(hook.headers['webhook-id']).toBe(delivery.eventId);
        expect(verify(endpoint.secret!, hook)).toMatchObject({
          type: 'webhook.test',
          data: { webhookId: endpoint.id },
        });
        expect(hook.headers['content-type']).toBe('application/json');
      }
      // pg-boss's backoff: the first retry waits 1–2 s, the second 2–4 s (after the timed-out attempt's own time).
      expect(second.at - first.at).toBeGreaterThanOrEqual(900);
      expect(third.at - second.at - TIMEOUT_MS).toBeGreaterThanOrEqual(1_800);
      // A signature from another secret is refused by the same verifier.
      expect(() => verify('whsec_' + Buffer.alloc(24, 1).toString('base64'), first)).toThrow();

      await eventually(async () => {
        const [listedDelivery] = await deliveries(`?webhook_id=${endpoint.id}`);
        expect(listedDelivery).toMatchObject({ id: delivery.id, status: 'SUCCEEDED' });
        expect(listedDelivery!.attempts.map((attempt) => attempt.statusCode)).toEqual([500, null, 204]);
        expect(listedDelivery!.attempts[1]!.error).toMatch(/no answer within/);
      });
    },
    scaled(60_000),
  );

  it('should refuse bad URLs, private addresses, unknown events and too many endpoints', async () => {
    const refused = async (body: unknown, field: string) => {
      const answer = await create(body);
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe('INVALID_REQUEST');
      expect(answer.body.issues?.map((issue) => issue.path.join('.'))).toContain(field);
      return answer.body;
    };
    await refused({ url: 'ftp://example.com/hook', events: ['job.failed'] }, 'url');
    await refused({ url: 'not a url', events: ['job.failed'] }, 'url');
    await refused({ url: `https://example.com/${'a'.repeat(2_100)}`, events: ['job.failed'] }, 'url');
    await refused({ url: `${receiver.url}/x`, events: ['job.exploded'] }, 'events.0');
    await refused({ url: `${receiver.url}/x`, events: [] }, 'events');
    await refused({ url: `${receiver.url}/x`, events: ['job.failed'], secret: 'mine' }, '');
    // Only 127.0.0.1 is allowed by the operator: other loopback, private and metadata addresses are not.
    for (const url of [
      'http://10.0.0.1/hook',
      'http://169.254.169.254/latest',
      'http://[::1]:9/hook',
      'http://127.0.0.2/x',
    ])
      expect((await refused({ url, events: ['job.failed'] }, 'url')).issues?.[0]?.message).toMatch(/not a public/);
    expect((await refused({ url: 'http://localhost.invalid/x', events: ['job.failed'] }, 'url')).code).toBe(
      'INVALID_REQUEST',
    );

    // The first test made one; two more fit, the fourth does not.
    for (const n of [1, 2])
      expect((await create({ url: `${receiver.url}/n${n}`, events: ['balance.low'] })).status).toBe(200);
    const fourth = await create({ url: `${receiver.url}/n4`, events: ['balance.low'] });
    expect(fourth.status).toBe(400);
    expect(fourth.body.issues?.[0]?.message).toMatch(/At most 3/);
    const all = (await (await call('/webhooks')).json()) as { data: Endpoint[] };
    expect(all.data).toHaveLength(3);
    for (const endpoint of all.data.slice(1)) {
      expect((await call(`/webhooks/${endpoint.id}`, { method: 'DELETE' })).status).toBe(200);
    }
    expect((await call(`/webhooks/${all.data[2]!.id}`, { method: 'DELETE' })).status).toBe(404);
  });

  it('should keep endpoints to their account and to ADMIN keys', async () => {
    const [mine] = ((await (await call('/webhooks')).json()) as { data: Endpoint[] }).data;
    const id = mine!.id;
    for (const [method, path, body] of [
      ['GET', `/webhooks/${id}`, undefined],
      ['PATCH', `/webhooks/${id}`, { enabled: false }],
      ['DELETE', `/webhooks/${id}`, undefined],
      ['POST', `/webhooks/${id}/test`, undefined],
      ['GET', '/webhooks/not-a-uuid', undefined],
    ] as const) {
      const answer = await call(path, { method, body, key: otherAdmin });
      expect(answer.status).toBe(404);
      expect(((await answer.json()) as ErrorBody).code).toBe('NOT_FOUND');
    }
    expect(((await (await call('/webhooks', { key: otherAdmin })).json()) as { data: unknown[] }).data).toEqual([]);
    expect(await deliveries()).not.toHaveLength(0);
    const others = (await (await call('/webhooks/deliveries', { key: otherAdmin })).json()) as { data: unknown[] };
    expect(others.data).toEqual([]);

    // Wallets may manage webhooks too: no credentials get the wallet sign-in challenge (402), as on every such route.
    const anonymous = await call('/webhooks', { key: null });
    expect(anonymous.status).toBe(402);
    expect(await anonymous.json()).toMatchObject({ x402Version: 2, error: 'Payment required' });
    const badKey = await call('/webhooks', { key: 'not-a-key' });
    expect(badKey.status).toBe(401);
    expect(((await badKey.json()) as ErrorBody).code).toBe('AUTHENTICATION_FAILED');
    const inferenceKey = await call('/webhooks', { key: inference });
    expect(inferenceKey.status).toBe(401);
    expect(((await inferenceKey.json()) as ErrorBody).code).toBe('ADMIN_KEY_REQUIRED');

    const patched = await call(`/webhooks/${id}`, { method: 'PATCH', body: { events: ['job.failed', 'job.failed'] } });
    expect(patched.status).toBe(200);
    expect(((await patched.json()) as { data: Endpoint }).data.events).toEqual(['job.failed']);
    const badPatch = await call(`/webhooks/${id}`, { method: 'PATCH', body: { url: 'http://10.1.2.3/' } });
    expect(badPatch.status).toBe(400);
  });

  it(
    'should tell a job’s end, a key’s 80 % and 100 % and a low balance, and a job’s own webhook_url',
    async () => {
      const events = ['job.completed', 'job.failed', 'key.spend_limit.80', 'key.spend_limit.100', 'balance.low'];
      const { body } = await create({ url: `${receiver.url}/all`, events });
      const secret = body.data.secret!;
      const settings = await call('/webhooks/settings', { method: 'PATCH', body: { balanceLowThresholdUsd: '9.99' } });
      expect(await settings.json()).toEqual({ data: { balanceLowThresholdUsd: '9.99' } });
      const badSettings = await call('/webhooks/settings', { method: 'PATCH', body: { balanceLowThresholdUsd: -1 } });
      expect(badSettings.status).toBe(400);

      const job = { model: 'lagoon-sim-music', prompt: 'a calm tune', duration_seconds: 5 };
      const privateUrl = await call('/audio/queue', {
        key: inference,
        body: { ...job, webhook_url: 'http://10.0.0.9/' },
      });
      expect(privateUrl.status).toBe(400);
      const queued = await call('/audio/queue', {
        key: inference,
        body: { ...job, webhook_url: `${receiver.url}/job` },
      });
      expect(queued.status).toBe(200);
      const { queue_id } = (await queued.json()) as { queue_id: string };

      const types = () => receiver.at('/all').map((hook) => JSON.parse(hook.body) as { type: string; data: object });
      await eventually(async () => {
        expect(
          types()
            .map((event) => event.type)
            .sort(),
        ).toEqual(['balance.low', 'job.completed', 'key.spend_limit.100', 'key.spend_limit.80']);
        expect(receiver.at('/job')).toHaveLength(1);
      }, 60_000);
      for (const hook of receiver.at('/all')) verify(secret, hook);
      const completed = types().find((event) => event.type === 'job.completed')!;
      expect(completed.data).toMatchObject({ queueId: queue_id, kind: 'audio', model: 'lagoon-sim-music' });
      expect(types().find((event) => event.type === 'key.spend_limit.100')!.data).toMatchObject({
        level: 100,
        currency: 'USD',
        limit: '0.02',
        spent: '0.02',
      });
      expect(types().find((event) => event.type === 'balance.low')!.data).toMatchObject({
        balance: '9.98',
        threshold: '9.99',
      });
      // A job's own URL is signed with the account's oldest endpoint's secret (the /retry endpoint's), same event id.
      const [oldest] = ((await (await call('/webhooks')).json()) as { data: Endpoint[] }).data;
      expect(oldest!.url).toBe(`${receiver.url}/retry`);
      const jobHook = receiver.at('/job')[0]!;
      const allJobHook = receiver.at('/all').find((hook) => hook.body.includes('job.completed'))!;
      expect(jobHook.headers['webhook-id']).toBe(allJobHook.headers['webhook-id']);
      expect(() => verify(secret, jobHook)).toThrow();
    },
    scaled(90_000),
  );
});
