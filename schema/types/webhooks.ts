import { formatNano } from '../../src/billing/money.ts';
import { AdminKeyRequiredError, NotFoundError, ValidationError } from '../../src/errors.ts';
import { WEBHOOK_EVENTS } from '../../src/webhooks/webhook.inputs.ts';
import type {
  WebhookAttempt,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookSettings,
} from '../../src/webhooks/webhook.service.ts';
import { builder } from '../builder.ts';

/*
 * Account webhooks (the GraphQL side of /api/v1/webhooks, src/webhooks/): the same service, so the same rules.
 * Event names are strings here as in REST (`job.completed`, `key.spend_limit.80` …), validated by the service.
 */

const WebhookRef = builder.objectRef<WebhookEndpoint>('Webhook').implement({
  description: 'An endpoint of the caller’s account that receives signed events. Its secret is shown once.',
  fields: (t) => ({
    id: t.exposeID('id'),
    url: t.exposeString('url'),
    description: t.exposeString('description'),
    events: t.exposeStringList('events', { description: `Any of: ${WEBHOOK_EVENTS.join(', ')}.` }),
    enabled: t.exposeBoolean('enabled'),
    createdAt: t.field({ type: 'DateTime', resolve: (row) => row.createdAt }),
    updatedAt: t.field({ type: 'DateTime', resolve: (row) => row.updatedAt }),
  }),
});

const WebhookAttemptRef = builder.objectRef<WebhookAttempt>('WebhookAttempt').implement({
  fields: (t) => ({
    attempt: t.exposeInt('attempt'),
    statusCode: t.exposeInt('statusCode', { nullable: true, description: 'Null: no answer (timeout, refused).' }),
    error: t.exposeString('error', { nullable: true }),
    durationMs: t.exposeInt('durationMs'),
    at: t.field({ type: 'DateTime', resolve: (row) => row.at }),
  }),
});

const WebhookDeliveryRef = builder.objectRef<WebhookDelivery>('WebhookDelivery').implement({
  description: 'One event sent to one endpoint (or a job’s webhook_url), with every attempt.',
  fields: (t) => ({
    id: t.exposeID('id'),
    eventId: t.exposeString('eventId', { description: 'The webhook-id header: the same on every attempt.' }),
    eventType: t.exposeString('eventType'),
    webhookId: t.exposeID('webhookId', { nullable: true, description: 'Null: a job’s own webhook_url.' }),
    url: t.exposeString('url'),
    status: t.exposeString('status', { description: 'PENDING, RETRYING, SUCCEEDED or FAILED.' }),
    lastStatusCode: t.exposeInt('lastStatusCode', { nullable: true }),
    lastError: t.exposeString('lastError', { nullable: true }),
    attempts: t.field({ type: [WebhookAttemptRef], resolve: (row) => row.attempts }),
    createdAt: t.field({ type: 'DateTime', resolve: (row) => row.createdAt }),
    deliveredAt: t.field({ type: 'DateTime', nullable: true, resolve: (row) => row.deliveredAt }),
  }),
});

const WebhookSettingsRef = builder.objectRef<WebhookSettings>('WebhookSettings').implement({
  fields: (t) => ({
    balanceLowThresholdUsd: t.field({
      type: 'Decimal',
      nullable: true,
      description: 'balance.low is sent when the USD balance falls under this (null: never).',
      resolve: (row) => (row.balanceLowThreshold === null ? null : formatNano(row.balanceLowThreshold)),
    }),
  }),
});

const CreatedWebhook = builder.simpleObject('CreatedWebhook', {
  fields: (t) => ({
    webhook: t.field({ type: WebhookRef }),
    secret: t.string({ description: 'The signing secret (whsec_…). Shown only here; store it now.' }),
  }),
});

const DeletedWebhook = builder.simpleObject('DeletedWebhook', {
  fields: (t) => ({ id: t.id(), success: t.boolean() }),
});

const CreateWebhookInput = builder.inputType('CreateWebhookInput', {
  fields: (t) => ({
    url: t.string({ required: true, description: 'http(s), at most 2048 characters, a public address.' }),
    events: t.stringList({ required: true }),
    description: t.string({ required: false }),
    enabled: t.boolean({ required: false }),
  }),
});

const UpdateWebhookInput = builder.inputType('UpdateWebhookInput', {
  fields: (t) => ({
    id: t.id({ required: true }),
    url: t.string({ required: false }),
    events: t.stringList({ required: false }),
    description: t.string({ required: false }),
    enabled: t.boolean({ required: false }),
  }),
});

/** GraphQL passes explicit nulls for omitted fields: they leave the value as it is. */
const given = (input: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(input).filter(([, value]) => value !== null && value !== undefined));

const errors = { types: [ValidationError, NotFoundError, AdminKeyRequiredError] };

builder.queryFields((t) => ({
  webhooks: t.field({
    type: [WebhookRef],
    description: 'The account’s webhook endpoints (ADMIN keys and wallets).',
    authScopes: { account: true },
    errors,
    resolve: (_root, _args, context) => context.services.webhooks.list(context.auth),
  }),
  webhook: t.field({
    type: WebhookRef,
    authScopes: { account: true },
    args: { id: t.arg.id({ required: true }) },
    errors,
    resolve: (_root, args, context) => context.services.webhooks.get(context.auth, String(args.id)),
  }),
  webhookDeliveries: t.field({
    type: [WebhookDeliveryRef],
    description: 'The account’s most recent deliveries, newest first, with every attempt’s status code.',
    authScopes: { account: true },
    args: { webhookId: t.arg.id({ required: false }), limit: t.arg.int({ required: false }) },
    errors,
    resolve: (_root, args, context) =>
      context.services.webhooks.deliveries(context.auth, {
        ...(args.webhookId != null && { webhookId: String(args.webhookId) }),
        ...(args.limit != null && { limit: args.limit }),
      }),
  }),
  webhookSettings: t.field({
    type: WebhookSettingsRef,
    authScopes: { account: true },
    errors,
    resolve: (_root, _args, context) => context.services.webhooks.settings(context.auth),
  }),
}));

builder.mutationFields((t) => ({
  createWebhook: t.field({
    type: CreatedWebhook,
    authScopes: { account: true },
    args: { input: t.arg({ type: CreateWebhookInput, required: true }) },
    errors,
    resolve: async (_root, { input }, context) => {
      const created = await context.services.webhooks.create(context.auth, given(input));
      return { webhook: created.endpoint, secret: created.secret };
    },
  }),
  updateWebhook: t.field({
    type: WebhookRef,
    authScopes: { account: true },
    args: { input: t.arg({ type: UpdateWebhookInput, required: true }) },
    errors,
    resolve: (_root, { input }, context) => {
      const { id, ...changes } = input;
      return context.services.webhooks.update(context.auth, String(id), given(changes));
    },
  }),
  deleteWebhook: t.field({
    type: DeletedWebhook,
    authScopes: { account: true },
    args: { id: t.arg.id({ required: true }) },
    errors,
    resolve: async (_root, { id }, context) => {
      await context.services.webhooks.delete(context.auth, String(id));
      return { id: String(id), success: true };
    },
  }),
  sendWebhookTest: t.field({
    type: WebhookDeliveryRef,
    description: 'Queues a webhook.test event to this endpoint.',
    authScopes: { account: true },
    args: { id: t.arg.id({ required: true }) },
    errors,
    resolve: (_root, { id }, context) => context.services.webhooks.sendTest(context.auth, String(id)),
  }),
  setWebhookSettings: t.field({
    type: WebhookSettingsRef,
    description: 'Sets the USD balance under which balance.low is sent (null: off).',
    authScopes: { account: true },
    args: { balanceLowThresholdUsd: t.arg({ type: 'Decimal', required: false }) },
    errors,
    resolve: (_root, args, context) =>
      context.services.webhooks.updateSettings(context.auth, {
        balanceLowThresholdUsd: args.balanceLowThresholdUsd ?? null,
      }),
  }),
}));
