import { createHmac, randomBytes } from 'node:crypto';

/*
 * Standard Webhooks signatures (https://www.standardwebhooks.com): the secret is `whsec_` + base64 of random bytes;
 * each delivery carries `webhook-id` (the event's id, the same on every attempt), `webhook-timestamp` (Unix seconds of
 * this attempt) and `webhook-signature: v1,<base64 HMAC-SHA256 over "id.timestamp.body" keyed by the secret's bytes>`.
 */

const PREFIX = 'whsec_';
const SECRET_BYTES = 24;

export function newWebhookSecret(): string {
  return `${PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

export function signatureHeaders(
  secret: string,
  message: { id: string; timestampSeconds: number; body: string },
): Record<string, string> {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
  const timestamp = String(message.timestampSeconds);
  const signature = createHmac('sha256', key).update(`${message.id}.${timestamp}.${message.body}`).digest('base64');
  return { 'webhook-id': message.id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}
