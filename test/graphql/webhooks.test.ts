import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { writeOperatorConfig } from '../helpers/chat.ts';
import { testDatabaseKind } from '../helpers/db.ts';
import { eventually } from '../helpers/eventually.ts';
import { createAccountWithKey } from '../helpers/services.ts';
import { scaled } from '../helpers/time-scale.ts';
import { startWebhookReceiver } from '../helpers/webhook-receiver.ts';

/*
 * Webhooks over GraphQL: the same service as REST, its failures typed (ValidationError with the field, NotFoundError
 * for another account's endpoint, AdminKeyRequiredError for an INFERENCE key), a test event delivered and verified
 * with `standardwebhooks`, the deliveries and the balance-low setting read back.
 */

type Result = { __typename: string; code?: string; issues?: { path: string[] }[] } & Record<string, unknown>;

describe(`GraphQL webhooks (${testDatabaseKind})`, () => {
  let t: TestApp;
  let config: Awaited<ReturnType<typeof writeOperatorConfig>>;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let admin: string;
  let inference: string;
  let otherAdmin: string;

  const create = (url: string, key = admin) =>
    t.graphql<{ createWebhook: Result & { data?: { secret: string; webhook: { id: string; events: string[] } } } }>(
      `mutation($url: String!) { createWebhook(input: { url: $url, events: ["job.failed", "balance.low"] }) {
        __typename ... on MutationCreateWebhookSuccess { data { secret webhook { id events } } }
        ... on Error { code } ... on ValidationError { issues { path } } } }`,
      { url },
      key,
    );

  beforeAll(async () => {
    config = await writeOperatorConfig('chat:\n  webScraping: { allowNetworks: ["127.0.0.1"] }');
    receiver = await startWebhookReceiver();
    t = await createTestApp({ LAGOON_CONFIG: config.path, LAGOON_JOB_WORKERS: 'true' });
    const account = await createAccountWithKey(t.app.services, { credit: { USD: '5' }, type: 'INFERENCE' });
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
    'should create an endpoint, send it a signed test event and list the delivery',
    async () => {
      const created = (await create(`${receiver.url}/gql`)).data!.createWebhook;
      expect(created.__typename).toBe('MutationCreateWebhookSuccess');
      const { secret, webhook } = created.data!;
      expect(secret).toMatch(/^whsec_/);
      expect(webhook.events).toEqual(['job.failed', 'balance.low']);

      const sent = await t.graphql<{ sendWebhookTest: Result & { data?: { eventId: string; status: string } } }>(
        `mutation($id: ID!) { sendWebhookTest(id: $id) { __typename
          ... on MutationSendWebhookTestSuccess { data { eventId status } } } }`,
        { id: webhook.id },
        admin,
      );
      expect(sent.data!.sendWebhookTest.__typename).toBe('MutationSendWebhookTestSuccess');
      const delivery = sent.data!.sendWebhookTest.data!;
      await eventually(async () => expect(receiver.at('/gql')).toHaveLength(1), 20_000);
      const hook = receiver.at('/gql')[0]!;
      const payload = new Webhook(secret).verify(hook.body, {
        'webhook-id': String(hook.headers['webhook-id']),
        'webhook-timestamp': String(hook.headers['webhook-timestamp']),
        'webhook-signature': String(hook.headers['webhook-signature']),
      });
      expect(payload).toMatchObject({ type: 'webhook.test' });
      expect(hook.headers['webhook-id']).toBe(delivery.eventId);

      await eventually(async () => {
        const listed = await t.graphql<{
          webhookDeliveries: { data: { eventId: string; status: string; attempts: { statusCode: number }[] }[] };
        }>(
          `query($id: ID) { webhookDeliveries(webhookId: $id) { ... on QueryWebhookDeliveriesSuccess {
            data { eventId status attempts { statusCode } } } } }`,
          { id: webhook.id },
          admin,
        );
        expect(listed.data!.webhookDeliveries.data).toEqual([
          { eventId: delivery.eventId, status: 'SUCCEEDED', attempts: [{ statusCode: 204 }] },
        ]);
      });

      const set = await t.graphql<{ setWebhookSettings: { data: { balanceLowThresholdUsd: string } } }>(
        `mutation { setWebhookSettings(balanceLowThresholdUsd: "1.5") {
          ... on MutationSetWebhookSettingsSuccess { data { balanceLowThresholdUsd } } } }`,
        undefined,
        admin,
      );
      expect(set.data!.setWebhookSettings.data.balanceLowThresholdUsd).toBe('1.5');
      const read = await t.graphql<{ webhookSettings: { data: { balanceLowThresholdUsd: string } } }>(
        `{ webhookSettings { ... on QueryWebhookSettingsSuccess { data { balanceLowThresholdUsd } } } }`,
        undefined,
        admin,
      );
      expect(read.data!.webhookSettings.data.balanceLowThresholdUsd).toBe('1.5');
    },
    scaled(60_000),
  );

  it('should answer bad input, other accounts and INFERENCE keys with typed errors', async () => {
    const privateUrl = (await create('http://192.168.1.1/hook')).data!.createWebhook;
    expect(privateUrl).toMatchObject({ __typename: 'ValidationError', code: 'INVALID_REQUEST' });
    expect(privateUrl.issues?.[0]?.path).toEqual(['url']);
    expect((await create('gopher://x')).data!.createWebhook.__typename).toBe('ValidationError');

    const badEvent = await t.graphql<{ createWebhook: Result }>(
      `mutation { createWebhook(input: { url: "${receiver.url}/x", events: ["nope"] }) {
        __typename ... on ValidationError { issues { path } } } }`,
    );
    expect(badEvent.data!.createWebhook.issues?.[0]?.path).toEqual(['events', '0']);

    const [mine] = await t.app.services.webhooks.list(
      await t.app.services.auth.authenticate({ authorization: `Bearer ${admin}` }, 'test'),
    );
    const theirs = await t.graphql<{ webhook: Result }>(
      `query($id: ID!) { webhook(id: $id) { __typename ... on Error { code } } }`,
      { id: mine!.id },
      otherAdmin,
    );
    expect(theirs.data!.webhook).toEqual({ __typename: 'NotFoundError', code: 'NOT_FOUND' });
    const deleteTheirs = await t.graphql<{ deleteWebhook: Result }>(
      `mutation($id: ID!) { deleteWebhook(id: $id) { __typename } }`,
      { id: mine!.id },
      otherAdmin,
    );
    expect(deleteTheirs.data!.deleteWebhook.__typename).toBe('NotFoundError');

    const byInference = (await create(`${receiver.url}/y`, inference)).data!.createWebhook;
    expect(byInference).toMatchObject({ __typename: 'AdminKeyRequiredError', code: 'ADMIN_KEY_REQUIRED' });
    const anonymous = await t.graphql(`{ webhooks { __typename } }`, undefined, null);
    expect(anonymous.errors?.[0]?.extensions?.code).toBe('AUTHENTICATION_FAILED');
  });
});
