// Standard Webhooks signatures (https://www.standardwebhooks.com/, "Signature scheme"): HMAC-SHA256
// of `${id}.${timestamp}.${body}` under each live signing secret, `v1,<base64>`, space-separated
// when two secrets are live (the 24 hours after a rotation), so a receiver holding either verifies.
import { createHmac } from 'node:crypto';
import { signingKey } from './secrets.ts';

export interface SignedMessage {
  /** The event's id: the same on every attempt, so receivers can drop duplicates by it. */
  id: string;
  /** Unix seconds of this attempt (receivers refuse old ones: replay protection). */
  timestamp: number;
  /** The exact bytes sent. */
  body: string;
}

/** The webhook-signature header: one `v1,` signature for each secret, in the order given. */
export function signWebhook(message: SignedMessage, secrets: readonly string[]): string {
  const signed = `${message.id}.${message.timestamp}.${message.body}`;
  return secrets.map((secret) => `v1,${createHmac('sha256', signingKey(secret)).update(signed).digest('base64')}`).join(' ');
}

/** The three Standard Webhooks headers of a message. */
export function webhookHeaders(message: SignedMessage, secrets: readonly string[]): Record<string, string> {
  return {
    'webhook-id': message.id,
    'webhook-timestamp': String(message.timestamp),
    'webhook-signature': signWebhook(message, secrets),
  };
}
