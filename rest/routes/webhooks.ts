import { z } from 'zod';
import { formatNano } from '../../src/billing/money.ts';
import type { Operations } from '../../src/services.ts';
import {
  CreateWebhookInput,
  UpdateWebhookInput,
  WEBHOOK_EVENTS,
  WebhookSettingsInput,
} from '../../src/webhooks/webhook.inputs.ts';
import type { WebhookDelivery, WebhookEndpoint } from '../../src/webhooks/webhook.service.ts';
import { iso, json, type JsonValue } from '../http.ts';
import type { Route } from '../router.ts';

/*
 * /webhooks: an account's webhook endpoints, their deliveries and the balance-low threshold (docs/api.md, Webhooks;
 * src/webhooks/). ADMIN keys and signed-in wallets; the literal paths (deliveries, settings) match before /:id.
 */

const tags = ['Webhooks'];

function endpointWire(endpoint: WebhookEndpoint): { [field: string]: JsonValue } {
  return {
    id: endpoint.id,
    url: endpoint.url,
    description: endpoint.description,
    events: endpoint.events,
    enabled: endpoint.enabled,
    createdAt: endpoint.createdAt.toISOString(),
    updatedAt: endpoint.updatedAt.toISOString(),
  };
}

function deliveryWire(delivery: WebhookDelivery): { [field: string]: JsonValue } {
  return {
    id: delivery.id,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    webhookId: delivery.webhookId,
    url: delivery.url,
    status: delivery.status,
    lastStatusCode: delivery.lastStatusCode,
    lastError: delivery.lastError,
    createdAt: delivery.createdAt.toISOString(),
    deliveredAt: iso(delivery.deliveredAt),
    attempts: delivery.attempts.map((attempt) => ({
      attempt: attempt.attempt,
      statusCode: attempt.statusCode,
      error: attempt.error,
      durationMs: attempt.durationMs,
      at: attempt.at.toISOString(),
    })),
  };
}

const settingsWire = (threshold: bigint | null) => ({
  data: { balanceLowThresholdUsd: threshold === null ? null : formatNano(threshold) },
});

const EndpointRecord = z.object({
  id: z.uuid(),
  url: z.string(),
  description: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENTS)),
  enabled: z.boolean(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});
const DeliveryRecord = z.object({
  id: z.uuid(),
  eventId: z.string(),
  eventType: z.string(),
  webhookId: z.uuid().nullable(),
  url: z.string(),
  status: z.enum(['PENDING', 'RETRYING', 'SUCCEEDED', 'FAILED']),
  lastStatusCode: z.number().int().nullable(),
  lastError: z.string().nullable(),
  createdAt: z.iso.datetime(),
  deliveredAt: z.iso.datetime().nullable(),
  attempts: z.array(
    z.object({
      attempt: z.number().int(),
      statusCode: z.number().int().nullable(),
      error: z.string().nullable(),
      durationMs: z.number().int(),
      at: z.iso.datetime(),
    }),
  ),
});
const SettingsRecord = z.object({ data: z.object({ balanceLowThresholdUsd: z.string().nullable() }) });
const DeliveriesQuery = z.object({
  webhook_id: z.uuid().optional().describe('Only this endpoint’s deliveries'),
  limit: z.coerce.number().int().min(1).max(100).optional().describe('1–100, default 50'),
});

const idOf = (params: Readonly<Record<string, string>>) => params.id ?? '';

async function listDeliveries(services: Operations, auth: Parameters<Operations['webhooks']['list']>[0], url: URL) {
  const limit = url.searchParams.get('limit');
  return services.webhooks.deliveries(auth, {
    ...(url.searchParams.has('webhook_id') && { webhookId: url.searchParams.get('webhook_id') }),
    ...(limit !== null && { limit }),
  });
}

export const webhookRoutes: Route[] = [
  {
    method: 'GET',
    path: '/webhooks',
    access: 'account',
    doc: {
      summary: 'List the account’s webhook endpoints',
      tags,
      response: z.object({ object: z.literal('list'), data: z.array(EndpointRecord) }),
    },
    async handler({ services, auth }) {
      return json({ object: 'list', data: (await services.webhooks.list(auth)).map(endpointWire) });
    },
  },
  {
    method: 'POST',
    path: '/webhooks',
    access: 'account',
    doc: {
      summary: 'Register a webhook endpoint; its signing secret (whsec_…) is in this response only',
      tags,
      body: CreateWebhookInput,
      response: z.object({ success: z.literal(true), data: EndpointRecord.extend({ secret: z.string() }) }),
    },
    async handler(call) {
      const { endpoint, secret } = await call.services.webhooks.create(call.auth, await call.json());
      return json({ success: true, data: { ...endpointWire(endpoint), secret } });
    },
  },
  {
    method: 'GET',
    path: '/webhooks/deliveries',
    access: 'account',
    doc: {
      summary: 'The account’s most recent webhook deliveries, newest first, with every attempt’s status code',
      tags,
      query: DeliveriesQuery,
      response: z.object({ object: z.literal('list'), data: z.array(DeliveryRecord) }),
    },
    async handler({ services, auth, url }) {
      return json({ object: 'list', data: (await listDeliveries(services, auth, url)).map(deliveryWire) });
    },
  },
  {
    method: 'GET',
    path: '/webhooks/settings',
    access: 'account',
    doc: { summary: 'The balance under which balance.low is sent (USD; null: off)', tags, response: SettingsRecord },
    async handler({ services, auth }) {
      return json(settingsWire((await services.webhooks.settings(auth)).balanceLowThreshold));
    },
  },
  {
    method: 'PATCH',
    path: '/webhooks/settings',
    access: 'account',
    doc: {
      summary: 'Set the balance under which balance.low is sent',
      tags,
      body: WebhookSettingsInput,
      response: SettingsRecord,
    },
    async handler(call) {
      const settings = await call.services.webhooks.updateSettings(call.auth, await call.json());
      return json(settingsWire(settings.balanceLowThreshold));
    },
  },
  {
    method: 'GET',
    path: '/webhooks/:id',
    access: 'account',
    doc: { summary: 'One webhook endpoint', tags, response: z.object({ data: EndpointRecord }) },
    async handler({ services, auth, params }) {
      return json({ data: endpointWire(await services.webhooks.get(auth, idOf(params))) });
    },
  },
  {
    method: 'PATCH',
    path: '/webhooks/:id',
    access: 'account',
    doc: {
      summary: 'Change a webhook endpoint’s URL, events, description or enabled flag',
      tags,
      body: UpdateWebhookInput,
      response: z.object({ success: z.literal(true), data: EndpointRecord }),
    },
    async handler(call) {
      const endpoint = await call.services.webhooks.update(call.auth, idOf(call.params), await call.json());
      return json({ success: true, data: endpointWire(endpoint) });
    },
  },
  {
    method: 'DELETE',
    path: '/webhooks/:id',
    access: 'account',
    doc: { summary: 'Delete a webhook endpoint', tags, response: z.object({ success: z.literal(true) }) },
    async handler({ services, auth, params }) {
      await services.webhooks.delete(auth, idOf(params));
      return json({ success: true });
    },
  },
  {
    method: 'POST',
    path: '/webhooks/:id/test',
    access: 'account',
    doc: {
      summary: 'Queue a webhook.test event to this endpoint',
      tags,
      response: z.object({ success: z.literal(true), data: DeliveryRecord }),
    },
    async handler({ services, auth, params }) {
      return json({ success: true, data: deliveryWire(await services.webhooks.sendTest(auth, idOf(params))) });
    },
  },
];
