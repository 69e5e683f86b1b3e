import { createHash } from 'node:crypto';
import * as z from 'zod/mini';
import { atMostCharacters, boundedText, described, optionalField } from '../commons/text.ts';
import { approvalViewSchema } from '../credit-transfers/credit-transfer.ts';
import { CREDIT_TRANSFER_STATUSES } from '../credit-transfers/credit-transfer-status.ts';
import { statusEventId } from '../credit-transfers/lifecycle.ts';
import type { StatusChangedEvent } from '../credit-transfers/ports.ts';
import type { approvalView } from '../payment-controls/approval.ts';

/**
 * The events the service tells clients about: each is delivered to the tenant's webhook
 * endpoints and listed by GET /v1/events, with the same body both ways.
 */
export const STATUS_CHANGED_TYPE = 'credit-transfer.status-changed';
export const ENDPOINT_DISABLED_TYPE = 'webhook-endpoint.disabled';
export const BATCH_COMPLETED_TYPE = 'credit-transfer-batch.completed';
export const APPROVAL_REQUIRED_TYPE = 'credit-transfer.approval-required';
export const APPROVED_TYPE = 'credit-transfer.approved';
export const WEBHOOK_EVENT_TYPES = [
  STATUS_CHANGED_TYPE,
  ENDPOINT_DISABLED_TYPE,
  BATCH_COMPLETED_TYPE,
  APPROVAL_REQUIRED_TYPE,
  APPROVED_TYPE,
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
        approval: optionalField(
          approvalViewSchema(),
          "The transfer's approval as it stood at this change (the decisions taken by then): present on a change to or from Pending.",
        ),
      }),
    }),
    'CreditTransferStatusChangedEvent',
  );

const approvalEventSchema = (
  type: typeof APPROVAL_REQUIRED_TYPE | typeof APPROVED_TYPE,
  id: string,
  texts: { paymentId: string; date: string; approval: string },
) =>
  named(
    z.strictObject({
      id: eventIdSchema(),
      type: z.literal(type),
      createdAt: createdAtSchema(),
      data: z.strictObject({
        paymentId: described(boundedText(1, 36), texts.paymentId),
        date: described(isoTimestamp(), texts.date),
        sequence: described(
          z.int().check(z.gte(0), z.lte(1000)),
          'Position in the transfer history of the status change this event is about (its status-changed event has the same).',
        ),
        approval: described(approvalViewSchema(), texts.approval),
      }),
    }),
    id,
  );

const approvalRequiredEventSchema = () =>
  approvalEventSchema(APPROVAL_REQUIRED_TYPE, 'CreditTransferApprovalRequiredEvent', {
    paymentId: 'The credit transfer that waits for approval (status Pending).',
    date: 'When it became Pending.',
    approval: 'What it waits for: the rule, how many approvals, until when (no decision yet).',
  });

const approvedEventSchema = () =>
  approvalEventSchema(APPROVED_TYPE, 'CreditTransferApprovedEvent', {
    paymentId: 'The credit transfer whose approvals moved it on (from Pending to Received).',
    date: 'When it moved on to Received.',
    approval: 'The approvals that moved it on.',
  });

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
      approvalRequiredEventSchema(),
      approvedEventSchema(),
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

/** A transfer's approval as events show it. */
export type ApprovalView = ReturnType<typeof approvalView>;

/**
 * The event of a status change, with the transfer's approval when the change is to or from
 * Pending. Its id is the status event's, which is stable however often the workflow publishes it,
 * so a republished change is recognised and never delivered as new.
 */
export const statusChangedEventRecord = (
  change: StatusChangedEvent,
  now: Date,
  approval?: ApprovalView,
): WebhookEventRecord =>
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
        ...(approval !== undefined && { approval }),
      },
    },
    change.paymentId,
  );

/** Whether a status change concerns the transfer's approval: it waits for one, or is done with it. */
export const touchesApproval = (change: Pick<StatusChangedEvent, 'status' | 'previousStatus'>): boolean =>
  change.status === 'Pending' || change.previousStatus === 'Pending';

/**
 * The approval event a status change makes, if any: `approval-required` when the transfer became
 * Pending, `approved` when its approvals moved it on to Received (a rejection, an expiry or a
 * cancellation is told by the status change alone).
 */
export const approvalEventTypeOf = (
  change: Pick<StatusChangedEvent, 'status' | 'previousStatus'>,
): typeof APPROVAL_REQUIRED_TYPE | typeof APPROVED_TYPE | undefined => {
  if (change.status === 'Pending') return APPROVAL_REQUIRED_TYPE;
  if (change.previousStatus === 'Pending' && change.status === 'Received') return APPROVED_TYPE;
  return undefined;
};

/**
 * The approval event of a status change (approvalEventTypeOf). Its id is derived from the change
 * (tenant, paymentId, position in the history), so each change makes it once, however often the
 * change is published.
 */
export const approvalEventRecord = (
  type: typeof APPROVAL_REQUIRED_TYPE | typeof APPROVED_TYPE,
  change: StatusChangedEvent,
  approval: ApprovalView,
  now: Date,
): WebhookEventRecord =>
  recordOf(
    change.tenant,
    {
      id: approvalEventId(type, change.tenant, change.paymentId, change.sequence),
      type,
      createdAt: now.toISOString(),
      data: { paymentId: change.paymentId, date: change.date, sequence: change.sequence, approval },
    },
    change.paymentId,
  );

const approvalEventId = (type: string, tenant: string, paymentId: string, sequence: number): string =>
  derivedEventId(type, tenant, paymentId, String(sequence));

/**
 * The ids of every event a transfer's history makes: each change's status event, and the approval
 * event of a change to or from Pending that makes one. The events of one transfer are read by them.
 */
export const eventIdsOfHistory = (
  tenant: string,
  paymentId: string,
  history: readonly Pick<StatusChangedEvent, 'status'>[],
): string[] =>
  history.flatMap((entry, sequence) => {
    const type = approvalEventTypeOf({
      status: entry.status,
      ...(sequence > 0 && { previousStatus: history[sequence - 1]?.status }),
    });
    const status = statusEventId(tenant, paymentId, sequence);
    return type === undefined ? [status] : [status, approvalEventId(type, tenant, paymentId, sequence)];
  });

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
