import { randomBytes } from 'node:crypto';
import * as z from 'zod/mini';
import { boundedText, described, optionalField } from '../commons/text.ts';
import { isoTimestamp, WEBHOOK_EVENT_TYPES, type WebhookEventType } from './webhook-event.ts';
import { WEBHOOK_URL_MAX_LENGTH } from './webhook-url.ts';

/** A tenant's webhook endpoints: where its events are pushed, and the secrets that sign them. */

/** A tenant registers at most this many endpoints: each one multiplies every event's deliveries. */
export const MAX_ENDPOINTS_PER_TENANT = 100;
/** How long the secret a rotation replaces keeps signing beside the new one. */
export const PREVIOUS_SECRET_SECONDS = 24 * 3600;
/** Random bytes of a signing secret (Standard Webhooks: 24 to 64). */
const SECRET_BYTES = 32;

const named = <T extends z.ZodMiniType>(schema: T, id: string): T => schema.check(z.meta({ id }));

export const WEBHOOK_ENDPOINT_ID_PATTERN =
  /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/*
 * Every schema here is built at its first parse, or when the document describes it, not at
 * import: building zod schemas is a measured part of every cold start (docs/benchmarks.md), and
 * each function parses one of them at most. zod keeps what a lazy schema built.
 */

/** The path parameter, as the document states it (the operations test the pattern themselves). */
export const webhookEndpointIdSchema = () =>
  described(
    z.string().check(z.regex(WEBHOOK_ENDPOINT_ID_PATTERN, 'must be a webhook endpoint id'), z.maxLength(36)),
    'Id of the webhook endpoint.',
  );

const eventTypesSchema = () =>
  z.array(z.enum(WEBHOOK_EVENT_TYPES)).check(
    z.minLength(1),
    z.maxLength(WEBHOOK_EVENT_TYPES.length),
    z.refine((types) => new Set(types).size === types.length, 'must not repeat a type'),
  );

export const createWebhookEndpointRequestSchema = z.lazy(() =>
  named(
    z.strictObject({
      url: described(
        boundedText(1, WEBHOOK_URL_MAX_LENGTH),
        'Where events are sent: an https URL whose host is public (it must not be or resolve to a loopback, private, link-local, carrier-grade NAT, unique-local or otherwise reserved address). Redirects are not followed.',
      ),
      description: optionalField(boundedText(1, 256), 'What the endpoint is for, for people.'),
      eventTypes: optionalField(eventTypesSchema(), 'The event types it receives; every type when absent.'),
    }),
    'WebhookEndpointRequest',
  ),
);
export type CreateWebhookEndpointRequest = z.infer<typeof createWebhookEndpointRequestSchema>;

const endpointFields = () => ({
  id: webhookEndpointIdSchema(),
  url: described(boundedText(1, WEBHOOK_URL_MAX_LENGTH), 'Where events are sent.'),
  description: optionalField(boundedText(1, 256), 'What the endpoint is for.'),
  eventTypes: described(eventTypesSchema(), 'The event types it receives.'),
  status: described(
    z.enum(['enabled', 'disabled']),
    '`disabled` once it answered 410 Gone or failed every delivery for three days; it then receives nothing.',
  ),
  createdAt: described(isoTimestamp(), 'When it was registered.'),
  disabledAt: optionalField(isoTimestamp(), 'When it was disabled.'),
  disabledReason: optionalField(z.enum(['gone', 'failing']), 'Why it was disabled.'),
});

export const webhookEndpointSchema = z.lazy(() => named(z.strictObject(endpointFields()), 'WebhookEndpoint'));
export type WebhookEndpoint = z.infer<typeof webhookEndpointSchema>;

const secretSchema = () =>
  described(
    z.string().check(z.regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/), z.maxLength(128)),
    'The signing secret, `whsec_` and base64 (Standard Webhooks). Shown this once only: keep it.',
  );

export const createdWebhookEndpointSchema = z.lazy(() =>
  named(z.strictObject({ ...endpointFields(), secret: secretSchema() }), 'CreatedWebhookEndpoint'),
);

export const rotatedWebhookSecretSchema = z.lazy(() =>
  named(
    z.strictObject({
      ...endpointFields(),
      secret: secretSchema(),
      previousSecretExpiresAt: described(
        isoTimestamp(),
        'Until then the secret it replaces still signs too: every delivery carries both signatures.',
      ),
    }),
    'RotatedWebhookSecret',
  ),
);

export interface SigningSecret {
  /**
   * The secret sealed under a data key of its own (SecretSealer): what every secret holds. Only
   * the functions that sign can open it; a role that reads the item cannot.
   */
  sealed?: string;
  /** A secret stored in plain text before secrets were sealed: signs as it is (docs/decisions.md). */
  value?: string;
  createdAt: string;
  /** Set once a newer secret replaced it: it stops signing then. */
  expiresAt?: string;
}

export interface WebhookEndpointRecord {
  tenant: string;
  id: string;
  url: string;
  description?: string;
  eventTypes: WebhookEventType[];
  status: 'enabled' | 'disabled';
  createdAt: string;
  /** Newest first. */
  secrets: SigningSecret[];
  /** Since when every attempt failed; absent while the last attempt succeeded. */
  failingSince?: string;
  disabledAt?: string;
  disabledReason?: 'gone' | 'failing';
  /** Bumped by every change, for conditional writes. */
  revision: number;
}

export const newSigningSecret = (): string => `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`;

/**
 * A new endpoint id: a UUID version 7 (RFC 9562), whose leading milliseconds make ids sort by
 * creation, so the list reads oldest first.
 */
export const newEndpointId = (now: Date): string => {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(now.getTime(), 0, 6);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x70;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

/** The secrets that sign at `now`: the newest, and any replaced one still in its overlap. */
export const liveSecrets = (endpoint: Pick<WebhookEndpointRecord, 'secrets'>, now: Date): SigningSecret[] =>
  endpoint.secrets.filter(
    (secret) => secret.expiresAt === undefined || Date.parse(secret.expiresAt) > now.getTime(),
  );

/** What seals a secret to one endpoint of one tenant: opened with any other, it fails. */
export interface SecretContext {
  tenant: string;
  endpointId: string;
}

export const secretContextOf = (endpoint: Pick<WebhookEndpointRecord, 'tenant' | 'id'>): SecretContext => ({
  tenant: endpoint.tenant,
  endpointId: endpoint.id,
});

/** Seals a new signing secret (envelope encryption under a KMS key, or the local key). */
export interface SecretSealer {
  seal(secret: string, context: SecretContext): Promise<string>;
}

/** Opens a sealed signing secret: only the functions that sign have one. */
export interface SecretOpener {
  open(sealed: string, context: SecretContext): Promise<string>;
}

/** The live secrets of the endpoint, opened, to sign with. */
export const openLiveSecrets = (
  opener: SecretOpener,
  endpoint: Pick<WebhookEndpointRecord, 'tenant' | 'id' | 'secrets'>,
  now: Date,
): Promise<string[]> =>
  Promise.all(
    liveSecrets(endpoint, now).map((secret) => {
      if (secret.sealed !== undefined) return opener.open(secret.sealed, secretContextOf(endpoint));
      if (secret.value !== undefined) return secret.value;
      throw new Error(
        `Webhook endpoint ${endpoint.id} holds a secret with neither a sealed nor a plain value`,
      );
    }),
  );

/** Replaces the signing secret (`sealed`, already sealed); the current one signs on beside it for PREVIOUS_SECRET_SECONDS. */
export const withRotatedSecret = (
  endpoint: WebhookEndpointRecord,
  sealed: string,
  now: Date,
): { endpoint: WebhookEndpointRecord; previousSecretExpiresAt: string } => {
  const previousSecretExpiresAt = new Date(now.getTime() + PREVIOUS_SECRET_SECONDS * 1000).toISOString();
  const kept = endpoint.secrets
    .filter((old) => old.expiresAt === undefined || Date.parse(old.expiresAt) > now.getTime())
    .map((old) =>
      old.expiresAt === undefined || old.expiresAt > previousSecretExpiresAt
        ? { ...old, expiresAt: previousSecretExpiresAt }
        : old,
    );
  return {
    endpoint: {
      ...endpoint,
      secrets: [{ sealed, createdAt: now.toISOString() }, ...kept].slice(0, 5),
      revision: endpoint.revision + 1,
    },
    previousSecretExpiresAt,
  };
};

/** The endpoint as the API shows it: never a secret. */
export const toWebhookEndpoint = (record: WebhookEndpointRecord): WebhookEndpoint => ({
  id: record.id,
  url: record.url,
  ...(record.description !== undefined && { description: record.description }),
  eventTypes: record.eventTypes,
  status: record.status,
  createdAt: record.createdAt,
  ...(record.disabledAt !== undefined && { disabledAt: record.disabledAt }),
  ...(record.disabledReason !== undefined && { disabledReason: record.disabledReason }),
});

export const receivesType = (endpoint: WebhookEndpointRecord, type: WebhookEventType): boolean =>
  endpoint.eventTypes.includes(type);

export const deliveryAttemptSchema = z.lazy(() =>
  named(
    z.strictObject({
      eventId: described(boundedText(36, 36), 'The event (the `webhook-id` sent).'),
      attempt: described(
        z.int().check(z.gte(1), z.lte(1000)),
        'Which attempt for this event: 1 for the first.',
      ),
      attemptedAt: described(isoTimestamp(), 'When the attempt started.'),
      durationMs: described(z.int().check(z.gte(0), z.lte(600_000)), 'How long it took, in milliseconds.'),
      httpStatus: optionalField(z.int().check(z.gte(100), z.lte(599)), 'The status the endpoint answered.'),
      error: optionalField(
        boundedText(1, 256),
        'Why there was no answer: a timeout, a refused connection, an address that is not public.',
      ),
      outcome: described(z.enum(['delivered', 'failed']), '`delivered` on a 2xx answer.'),
    }),
    'WebhookDeliveryAttempt',
  ),
);
export type DeliveryAttempt = z.infer<typeof deliveryAttemptSchema>;

export const redeliveryRequestSchema = z.lazy(() =>
  named(
    z
      .strictObject({
        eventId: optionalField(boundedText(36, 36), 'Send this event again.'),
        since: optionalField(isoTimestamp(), 'Send again every event recorded at or after this time.'),
      })
      .check(
        z.refine(
          (request) => (request.eventId === undefined) !== (request.since === undefined),
          'must name exactly one of eventId and since',
        ),
      ),
    'WebhookRedeliveryRequest',
  ),
);

export const redeliveryResultSchema = z.lazy(() =>
  named(
    z.strictObject({
      queued: described(z.int().check(z.gte(0), z.lte(100_000)), 'How many events were queued for delivery.'),
      nextSince: optionalField(
        isoTimestamp(),
        'Present when more events follow than one request queues: send it as `since` to queue the rest.',
      ),
    }),
    'WebhookRedeliveryResult',
  ),
);
