import { Webhook } from 'standardwebhooks';

/**
 * The headers of one delivery attempt, as the Standard Webhooks specification defines them and
 * signed by its published library: `v1,<base64 HMAC-SHA256 of id.timestamp.body>` per live
 * secret, space-separated while a rotated secret still signs beside the new one.
 */
export const signedHeaders = (
  eventId: string,
  timestamp: Date,
  body: string,
  secrets: readonly string[],
): Record<string, string> => ({
  'content-type': 'application/json',
  'webhook-id': eventId,
  'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
  'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(eventId, timestamp, body)).join(' '),
});
