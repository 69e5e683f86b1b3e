import { createHash } from 'node:crypto';
import * as z from 'zod/mini';
import { atMostCharacters, boundedText, described, optionalField } from '../commons/text.ts';
import { CREDIT_TRANSFER_STATUSES } from '../credit-transfers/credit-transfer-status.ts';
import type { StatusChangedEvent } from '../credit-transfers/ports.ts';

/**
 * The events the service tells clients about: each is delivered to the tenant's webhook
 * endpoints and listed by GET /v1/events, with the same body both ways.
 */
export const STATUS_CHANGED_TYPE = 'credit-transfer.status-changed';
export const ENDPOINT_DISABLED_TYPE = 'webhook-endpoint.disabled';
export const BATCH_COMPLETED_TYPE = 'credit-transfer-batch.completed';
export const WEBHOOK_EVENT_TYPES = [
  STATUS_CHANGED_TYPE,
  ENDPOINT_DISABLED_TYPE,
  BATCH_COMPLETED_TYPE,
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Events are kept (listed and redeliverable) at least this long. */
export const EVENT_RETENTION_DAYS = 400;

/**
 * An event's first write is given up (and recording fails, to be done again) unless it is done
 * within this time of the call, which takes place right after its `createdAt` is taken: no event
 * becomes visible later than this after its own `createdAt`.
 */
export const EVENT_WRITE_LIMIT_MS = 5_000;

/**
 * The events list's cursor never moves past events recorded more recently than this (it shows
 * them, and hands back a cursor from before them). Writes race (one event's `createdAt` taken
 * first may be written last), so a cursor past a recent event could page past one that appears a
 * moment later, earlier in the order. Past this horizon, three times the write limit, every
 * event that will ever be there is there: a consumer following the cursor misses none.
 */
export const EVENT_SETTLE_MS = 3 * EVENT_WRITE_LIMIT_MS;

/** An ISO 8601 UTC timestamp (`Z`), as every webhook time is written. */
export const isoTimestamp = () => z.iso.datetime().check(atMostCharacters(35));

const named = <T extends z.ZodMiniType>(schema: T, id: string): T => schema.check(z.meta({ id }));
const statusSchema = () => z.enum(CREDIT_TRANSFER_STATUSES);
const eventIdSchema = () =>
  described(
    boundedText(36, 36),
    'Unique id of the event: the `webhook-id` header of its deliveries, the same on every retry.',
  );
const createdAtSchema = () =>
  described(
    isoTimestamp(),
    'When the service recorded the event (ISO 8601, UTC, milliseconds). The list is ordered by it.',
  );

const statusChangedEventSchema = () =>
  named(
    z.strictObject({
      id: eventIdSchema(),
      type: z.literal(STATUS_CHANGED_TYPE),
      createdAt: createdAtSchema(),
      data: z.strictObject({
        paymentId: described(boundedText(1, 36), 'The credit transfer whose status changed.'),
        status: described(statusSchema(), 'The new status.'),
        statusReason: optionalField(boundedText(1, 35), 'Reason attached to the new status.'),
        statusReasonCode: optionalField(
          boundedText(1, 4),
          "The reason's ISO 20022 ExternalStatusReason1Code (e.g. AM04), present whenever `statusReason` is.",
        ),
        date: described(isoTimestamp(), 'When the status changed.'),
        previousStatus: optionalField(
          statusSchema(),
          'The status before; absent on the first one (Received).',
        ),
        sequence: described(
          z.int().check(z.gte(0), z.lte(1000)),
          'Position of this change in the transfer history, from 0: it grows with each change of one transfer, so a receiver can drop an event older than one it already applied.',
        ),
      }),
    }),
    'CreditTransferStatusChangedEvent',
  );

const endpointDisabledEventSchema = () =>
  named(
    z.strictObject({
      id: eventIdSchema(),
      type: z.literal(ENDPOINT_DISABLED_TYPE),
      createdAt: createdAtSchema(),
      data: z.strictObject({
        endpointId: described(boundedText(36, 36), 'The webhook endpoint that was disabled.'),
        url: described(boundedText(1, 2048), 'Its URL.'),
        reason: described(
          z.enum(['gone', 'failing']),
          '`gone`: it answered 410 Gone; `failing`: no delivery to it succeeded for three days.',
        ),
        disabledAt: described(isoTimestamp(), 'When it was disabled.'),
      }),
    }),
    'WebhookEndpointDisabledEvent',
  );

const countsSchema = (description: string) =>
  described(
    z.record(z.string().check(z.minLength(1), z.maxLength(35)), z.int().check(z.gte(0))),
    description,
  );

const batchCompletedEventSchema = () =>
  named(
    z.strictObject({
      id: eventIdSchema(),
      type: z.literal(BATCH_COMPLETED_TYPE),
      createdAt: createdAtSchema(),
      data: z.strictObject({
        batchId: described(boundedText(36, 36), 'The batch whose every transfer is final.'),
        messageId: described(
          boundedText(1, 35),
          "The batch message's GrpHdr/MsgId (for JSON, the batchId without hyphens).",
        ),
        count: described(z.int().check(z.gte(0)), 'How many transfers the batch holds.'),
        groupStatus: described(
          z.enum(['ACSC', 'PART', 'RJCT']),
          "The batch's ISO 20022 group status (its pain.002's GrpSts): `ACSC` every transfer settled, `PART` some settled and some rejected or cancelled, `RJCT` none settled.",
        ),
        countsByStatus: countsSchema('How many transfers ended in each status.'),
        countsByReasonCode: countsSchema(
          'How many transfers ended with each ISO 20022 status reason code (rejected and cancelled ones).',
        ),
        completedAt: described(isoTimestamp(), 'When the last transfer of the batch became final.'),
      }),
    }),
    'CreditTransferBatchCompletedEvent',
  );

/**
 * Built when the document describes it, not at import: no function parses an event, and building
 * zod schemas is a measured part of every cold start (docs/benchmarks.md).
 */
export const webhookEventSchema = z.lazy(() =>
  named(
    z.discriminatedUnion('type', [
      statusChangedEventSchema(),
      endpointDisabledEventSchema(),
      batchCompletedEventSchema(),
    ]),
    'Event',
  ),
);
export type WebhookEvent = z.infer<typeof webhookEventSchema>;

/** A completed batch as its event describes it. */
export interface CompletedBatch {
  tenant: string;
  batchId: string;
  messageId: string;
  count: number;
  groupStatus: 'ACSC' | 'PART' | 'RJCT';
  countsByStatus: Record<string, number>;
  countsByReasonCode: Record<string, number>;
  completedAt: string;
}

/** An event as the service keeps it: the body exactly as delivered, and what lists and filters need. */
export interface WebhookEventRecord {
  tenant: string;
  id: string;
  type: WebhookEventType;
  createdAt: string;
  /** The transfer it is about, for `paymentId.eq`. */
  paymentId?: string;
  /** The JSON body, byte for byte what every delivery sends. */
  body: string;
  /** When it may be forgotten, epoch seconds. */
  expiresAt: number;
}

const recordOf = (
  tenant: string,
  event: WebhookEvent,
  paymentId: string | undefined,
): WebhookEventRecord => ({
  tenant,
  id: event.id,
  type: event.type,
  createdAt: event.createdAt,
  ...(paymentId !== undefined && { paymentId }),
  body: JSON.stringify(event),
  expiresAt: Math.floor(Date.parse(event.createdAt) / 1000) + EVENT_RETENTION_DAYS * 86_400,
});

/**
 * The event of a status change. Its id is the status event's, which is stable however often the
 * workflow publishes it, so a republished change is recognised and never delivered as new.
 */
export const statusChangedEventRecord = (change: StatusChangedEvent, now: Date): WebhookEventRecord =>
  recordOf(
    change.tenant,
    {
      id: change.eventId,
      type: STATUS_CHANGED_TYPE,
      createdAt: now.toISOString(),
      data: {
        paymentId: change.paymentId,
        status: change.status,
        ...(change.statusReason !== undefined && { statusReason: change.statusReason }),
        ...(change.statusReasonCode !== undefined && { statusReasonCode: change.statusReasonCode }),
        date: change.date,
        ...(change.previousStatus !== undefined && { previousStatus: change.previousStatus }),
        sequence: change.sequence,
      },
    },
    change.paymentId,
  );

/** A UUID-shaped id (RFC 9562 version 8) derived from its parts: the same parts always give the same id. */
export const derivedEventId = (...parts: string[]): string => {
  const hex = createHash('sha256').update(parts.join('\u0000')).digest('hex');
  const variant = ((Number.parseInt(hex.slice(16, 17), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
};

/** The event saying an endpoint was disabled; one per endpoint, as an endpoint is disabled once. */
export const endpointDisabledEventRecord = (
  tenant: string,
  endpoint: { id: string; url: string },
  reason: 'gone' | 'failing',
  now: Date,
): WebhookEventRecord =>
  recordOf(
    tenant,
    {
      id: derivedEventId('webhook-endpoint.disabled', tenant, endpoint.id),
      type: ENDPOINT_DISABLED_TYPE,
      createdAt: now.toISOString(),
      data: { endpointId: endpoint.id, url: endpoint.url, reason, disabledAt: now.toISOString() },
    },
    undefined,
  );

/** The event saying every transfer of a batch is final; its id is fixed per batch (published once or more, kept once). */
export const batchCompletedEventRecord = (
  eventId: string,
  batch: CompletedBatch,
  now: Date,
): WebhookEventRecord =>
  recordOf(
    batch.tenant,
    {
      id: eventId,
      type: BATCH_COMPLETED_TYPE,
      createdAt: now.toISOString(),
      data: {
        batchId: batch.batchId,
        messageId: batch.messageId,
        count: batch.count,
        groupStatus: batch.groupStatus,
        countsByStatus: batch.countsByStatus,
        countsByReasonCode: batch.countsByReasonCode,
        completedAt: batch.completedAt,
      },
    },
    undefined,
  );
