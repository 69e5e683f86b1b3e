import { WebhookVerificationError as LibraryVerificationError, Webhook } from 'standardwebhooks';
import { WebhookVerificationError, type WebhookVerificationFailure } from './errors.ts';
import type { WebhookEvent } from './types.ts';

/** Request headers as node:http (`request.headers`), Express, or fetch (`Headers`) give them. */
export type WebhookHeaders = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

const SIGNED_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

const headerValues = (headers: WebhookHeaders): Record<string, string> => {
  const read = (name: string): string | undefined => {
    if (headers instanceof Headers) return headers.get(name) ?? undefined;
    const key = Object.keys(headers).find((each) => each.toLowerCase() === name);
    const value = key === undefined ? undefined : headers[key];
    // A header sent twice: node:http gives an array; its signatures all count.
    return typeof value === 'string' ? value : value?.join(' ');
  };
  return Object.fromEntries(
    SIGNED_HEADERS.flatMap((name) => {
      const value = read(name);
      return value === undefined ? [] : [[name, value]];
    }),
  );
};

const FAILURES: Record<string, WebhookVerificationFailure> = {
  'Missing required headers': 'missing_headers',
  'Invalid Signature Headers': 'invalid_timestamp',
  'Message timestamp too old': 'timestamp_too_old',
  'Message timestamp too new': 'timestamp_too_new',
  'No matching signature found': 'no_matching_signature',
};

const isEvent = (value: unknown): value is WebhookEvent => {
  const event = value as Partial<Record<string, unknown>> | null;
  return (
    typeof event === 'object' &&
    event !== null &&
    typeof event.id === 'string' &&
    typeof event.type === 'string' &&
    typeof event.createdAt === 'string' &&
    typeof event.data === 'object' &&
    event.data !== null
  );
};

const eventOf = (body: string): WebhookEvent => {
  let event: unknown;
  try {
    event = JSON.parse(body);
  } catch (error) {
    throw new WebhookVerificationError('invalid_body', 'The webhook body is not JSON', { cause: error });
  }
  if (!isEvent(event)) throw new WebhookVerificationError('invalid_body', 'The webhook body is not an event');
  return event;
};

/**
 * Verifies a webhook request as the Standard Webhooks specification defines it (with its
 * `standardwebhooks` library) and answers the event it carries.
 *
 * - `rawBody`: the body exactly as it arrived, read before any JSON parser (a parsed and
 *   re-serialised body no longer matches its signature).
 * - `headers`: the request's headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`).
 * - `secrets`: the endpoint's `whsec_...` secret, or several (during a rotation, the old and the
 *   new): a request signed with any of them verifies.
 *
 * Throws WebhookVerificationError (its `reason` says why) when no signature matches, the
 * timestamp is more than 5 minutes away from now (a replay), a header is missing, or the body is
 * not an event.
 */
export const verifyWebhook = (
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secrets: string | readonly string[],
): WebhookEvent => {
  const body = typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody);
  const signed = headerValues(headers);
  const keys = typeof secrets === 'string' ? [secrets] : secrets;
  if (keys.length === 0) throw new TypeError('verifyWebhook needs at least one secret');
  let failure: unknown;
  for (const secret of keys) {
    try {
      new Webhook(secret).verify(body, signed, { jsonParse: false });
      return eventOf(body);
    } catch (error) {
      if (!(error instanceof LibraryVerificationError)) throw error;
      failure = error;
      // Only the signature depends on the secret: a missing header or a stale time fails them all.
      if (error.message !== 'No matching signature found') break;
    }
  }
  const message = (failure as Error).message;
  throw new WebhookVerificationError(
    FAILURES[message] ?? 'no_matching_signature',
    `The webhook request did not verify: ${message}`,
    { cause: failure },
  );
};
