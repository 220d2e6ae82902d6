import { z } from 'zod';
import { storedString } from '../validation.ts';

/* The bodies of the webhook operations, shared by REST (rest/routes/webhooks.ts) and GraphQL (schema/types/webhooks.ts). */

export const WEBHOOK_EVENTS = [
  'job.completed',
  'job.failed',
  'key.spend_limit.80',
  'key.spend_limit.100',
  'balance.low',
  'wallet.top_up.credited',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];

/** Longer URLs are refused: an endpoint is a receiver's address, not a place for data. */
export const MAX_WEBHOOK_URL_LENGTH = 2_048;

export const WebhookUrl = storedString()
  .trim()
  .max(MAX_WEBHOOK_URL_LENGTH, `At most ${MAX_WEBHOOK_URL_LENGTH} characters`)
  .pipe(z.url({ protocol: /^https?$/, error: 'Must be an http(s) URL' }));

const Events = z
  .array(z.enum(WEBHOOK_EVENTS))
  .min(1, 'Name at least one event')
  .max(WEBHOOK_EVENTS.length)
  .transform((events) => [...new Set(events)]);

const Description = storedString().trim().max(200);

export const CreateWebhookInput = z.strictObject({
  url: WebhookUrl,
  events: Events,
  description: Description.optional(),
  enabled: z.boolean().optional(),
});
export type CreateWebhookInput = z.output<typeof CreateWebhookInput>;

export const UpdateWebhookInput = z.strictObject({
  url: WebhookUrl.optional(),
  events: Events.optional(),
  description: Description.optional(),
  enabled: z.boolean().optional(),
});
export type UpdateWebhookInput = z.output<typeof UpdateWebhookInput>;

/** A USD amount as a decimal string or number (`"5"`, `2.5`), or null to turn the balance.low event off. */
export const WebhookSettingsInput = z.strictObject({
  balanceLowThresholdUsd: z
    .union([
      z.number().nonnegative().max(1e9),
      z.string().regex(/^\d{1,9}(\.\d{1,9})?$/, 'A USD amount such as "5.00"'),
    ])
    .nullable(),
});
export type WebhookSettingsInput = z.output<typeof WebhookSettingsInput>;

export const WebhookId = z.uuid({ error: 'Must be a webhook id (UUID)' });

export const DeliveryListInput = z.strictObject({
  webhookId: WebhookId.optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});
export type DeliveryListInput = z.output<typeof DeliveryListInput>;
