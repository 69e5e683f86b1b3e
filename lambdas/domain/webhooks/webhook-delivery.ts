import type { Clock } from '../commons/ports.ts';
import type { StatusChangedEvent } from '../credit-transfers/ports.ts';
import { batchCompletedEventId } from '../iso20022/batch-outcome.ts';
import { approvalViewAt, type PendingApproval } from '../payment-controls/approval.ts';
import type {
  DeliveryWaker,
  PendingDelivery,
  WebhookDeliveryStore,
  WebhookEndpointStore,
  WebhookEventStore,
  WebhookSender,
} from './ports.ts';
import { checkStatusEvent, type ForgedReason, type TransferHistories } from './status-event-check.ts';
import {
  openLiveSecrets,
  receivesType,
  type SecretOpener,
  type WebhookEndpointRecord,
} from './webhook-endpoint.ts';
import {
  type ApprovalView,
  approvalEventRecord,
  approvalEventTypeOf,
  BATCH_COMPLETED_TYPE,
  batchCompletedEventRecord,
  type CompletedBatch,
  endpointDisabledEventRecord,
  STATUS_CHANGED_TYPE,
  statusChangedEventRecord,
  touchesApproval,
  type WebhookEventRecord,
} from './webhook-event.ts';
import {
  CLAIM_SECONDS,
  failedTooLong,
  nextAttemptAt,
  type RetryPolicy,
  verdictOf,
} from './webhook-schedule.ts';
import { signedHeaders } from './webhook-signature.ts';
import { isLocalReceiver, type WebhookUrlPolicy } from './webhook-url.ts';

/**
 * Deliveries, the same on both runtimes: an event is kept and queued for every endpoint that
 * wants it (in the table, before the status event that brought it is acknowledged), then each
 * queued delivery is claimed, sent, and finished or put back on its own schedule.
 */
export interface DeliveryDependencies {
  endpoints: WebhookEndpointStore;
  events: WebhookEventStore;
  deliveries: WebhookDeliveryStore;
  sender: WebhookSender;
  clock: Clock;
  policy: RetryPolicy;
  urlPolicy: WebhookUrlPolicy;
  /** Opens the endpoints' sealed signing secrets: the functions that sign are the only ones with it. */
  secrets: SecretOpener;
  /** Told when this worker disabled an endpoint (an alarm counts these on AWS). */
  onEndpointDisabled?: (endpoint: WebhookEndpointRecord, reason: 'gone' | 'failing') => void;
  /** Wakes the retry sender at a retry's due time (on AWS; the local worker looks at the queue itself). */
  waker?: DeliveryWaker;
}

/** What recording an event needs: of the endpoints, only the tenant's list. */
export type RecordingDependencies = Pick<DeliveryDependencies, 'events' | 'deliveries' | 'clock'> & {
  endpoints: Pick<WebhookEndpointStore, 'all'>;
};

/**
 * The endpoints as one batch of events sees them: each tenant's list read once for the batch
 * rather than once per event (a settled transfer makes five status events). An endpoint
 * registered while a batch is recorded receives events from the next batch on; the events API
 * lists every event all the same.
 */
export const endpointsOncePerBatch = (
  endpoints: Pick<WebhookEndpointStore, 'all'>,
): Pick<WebhookEndpointStore, 'all'> => {
  const read = new Map<string, Promise<WebhookEndpointRecord[]>>();
  return {
    all: (tenant) => {
      let list = read.get(tenant);
      if (list === undefined) {
        list = endpoints.all(tenant);
        read.set(tenant, list);
        // A failed read is not kept: the next event of the tenant reads again.
        list.catch(() => read.delete(tenant));
      }
      return list;
    },
  };
};

/** The tenant's enabled endpoints that receive `type`. */
const endpointsFor = async (
  deps: Pick<RecordingDependencies, 'endpoints'>,
  tenant: string,
  type: WebhookEventRecord['type'],
  exceptEndpoint?: string,
): Promise<WebhookEndpointRecord[]> =>
  (await deps.endpoints.all(tenant)).filter(
    (endpoint) =>
      endpoint.status === 'enabled' && receivesType(endpoint, type) && endpoint.id !== exceptEndpoint,
  );

/** Queues the event for each endpoint, due now, unless queued already; answers the deliveries it queued. */
const queueFor = async (
  deps: Pick<RecordingDependencies, 'deliveries' | 'clock'>,
  event: Pick<WebhookEventRecord, 'tenant' | 'id'>,
  endpoints: readonly WebhookEndpointRecord[],
): Promise<PendingDelivery[]> => {
  const now = deps.clock.now();
  const queued: PendingDelivery[] = [];
  for (const endpoint of endpoints) {
    const delivery = { tenant: event.tenant, endpointId: endpoint.id, eventId: event.id };
    if (await deps.deliveries.queue(delivery, now, false)) {
      queued.push({ ...delivery, attempts: 0, dueAt: now.toISOString() });
    }
  }
  return queued;
};

/**
 * Keeps the event (unless kept already: a republished event keeps its first body) and queues it
 * for each enabled endpoint of its tenant that receives its type, unless queued already. Answers
 * the deliveries it queued. Safe to repeat: a crash part way is made good by the next run.
 * The event is made here, its `createdAt` taken right before it is written: the write's time
 * limit counts from then (see EVENT_WRITE_LIMIT_MS).
 */
export const recordEvent = async (
  deps: RecordingDependencies,
  eventAt: (createdAt: Date) => WebhookEventRecord,
  options: { exceptEndpoint?: string } = {},
): Promise<PendingDelivery[]> => {
  const event = eventAt(deps.clock.now());
  await deps.events.putIfAbsent(event);
  return queueFor(deps, event, await endpointsFor(deps, event.tenant, event.type, options.exceptEndpoint));
};

/**
 * A delivery of an event just recorded, kept in no table: its first attempt is made at once, and
 * it is queued only when that attempt does not deliver it (most first attempts do, and then the
 * delivery costs no queue write, no claim and no finish).
 */
export interface FirstDelivery {
  endpoint: WebhookEndpointRecord;
  event: WebhookEventRecord;
}

/** What recording a status change leaves to do: the first deliveries of a new event, or deliveries it queued. */
export interface RecordedEvent {
  tenant: string;
  eventId: string;
  /** To be made with makeFirstDeliveries before the change is acknowledged. */
  first: FirstDelivery[];
  queued: PendingDelivery[];
}

/**
 * Keeps the event of a status change for first deliveries made at once (see FirstDelivery). An
 * event kept already (the change published again, or its recording stopped part way) has each
 * delivery whose first attempt is recorded or which is queued made already; the others are
 * queued now (one may go out twice, with the same id: its attempt was cut short before it was
 * recorded; none is lost).
 */
export const recordStatusChangeForFirstDeliveries = (
  deps: RecordingDependencies,
  change: StatusChangedEvent,
  approval?: ApprovalView,
): Promise<RecordedEvent> =>
  recordForFirstDeliveries(deps, change.tenant, STATUS_CHANGED_TYPE, (now) =>
    statusChangedEventRecord(change, now, approval),
  );

/** Keeps an event of `type` for first deliveries made at once (see recordStatusChangeForFirstDeliveries). */
const recordForFirstDeliveries = async (
  deps: RecordingDependencies,
  tenant: string,
  type: WebhookEventRecord['type'],
  eventAt: (now: Date) => WebhookEventRecord,
): Promise<RecordedEvent> => {
  // Read before the event is made: its createdAt is taken right before its write.
  const endpoints = await endpointsFor(deps, tenant, type);
  const event = eventAt(deps.clock.now());
  const recorded = { tenant: event.tenant, eventId: event.id, first: [], queued: [] };
  if (await deps.events.putIfAbsent(event)) {
    return { ...recorded, first: endpoints.map((endpoint) => ({ endpoint, event })) };
  }
  if (endpoints.length === 0) return recorded;
  const kept = await deps.events.get(event.tenant, event.id, deps.clock.now());
  if (kept === undefined) return recorded;
  const unmade: WebhookEndpointRecord[] = [];
  for (const endpoint of endpoints) {
    const delivery = { tenant: event.tenant, endpointId: endpoint.id, eventId: event.id };
    if (!(await deps.deliveries.firstDeliveryMade(delivery, kept.createdAt))) unmade.push(endpoint);
  }
  return { ...recorded, queued: await queueFor(deps, event, unmade) };
};

/**
 * Makes the first deliveries of a recorded event: each is attempted at once through the
 * dispatcher, or queued (due now) when no place in it comes free soon. Rejects when one could be
 * neither delivered nor queued: recording the event again (the status change comes back) finds
 * neither its first attempt nor a queued delivery, and queues it.
 */
export const makeFirstDeliveries = async (
  deps: Pick<RecordingDependencies, 'deliveries' | 'clock'>,
  dispatcher: { offerFirst(delivery: FirstDelivery): Promise<AttemptResult | undefined> },
  recorded: RecordedEvent,
): Promise<void> => {
  const results = await Promise.allSettled(
    recorded.first.map(async (first) => {
      if ((await dispatcher.offerFirst(first)) === undefined)
        await queueFor(deps, first.event, [first.endpoint]);
    }),
  );
  const failed = results.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
};

/** The approval of a stored transfer (kept once decided), read strongly consistent. */
export interface TransferApprovals {
  approval(tenant: string, paymentId: string): Promise<PendingApproval | undefined>;
}

/** What recording an event from the bus needs besides: the stored transfers, and who hears of a forgery. */
export type BusRecordingDependencies = RecordingDependencies & {
  histories: TransferHistories;
  approvals: TransferApprovals;
  /** Told of every event dropped as no true status change (a metric counts these, and is alarmed). */
  onForged: (event: unknown, reason: ForgedReason) => void;
};

/**
 * A status event as it comes off the bus (EventBridge, or the local events file): recorded only
 * when it is a true change of a stored transfer of its tenant; anything else is dropped (never
 * delivered, never listed) and reported. Anyone allowed to put events on a bus can put any
 * event there; only the table says what happened.
 */
export const recordStatusEventFromBus = async (
  deps: BusRecordingDependencies,
  event: unknown,
): Promise<RecordedEvent | undefined> => {
  const check = await checkStatusEvent(deps.histories, event);
  if (!check.accepted) {
    deps.onForged(event, check.reason);
    return undefined;
  }
  const change = check.event;
  if (!touchesApproval(change)) return recordStatusChangeForFirstDeliveries(deps, change);
  // As it stood at the change: the same body whenever (and however often) the change is recorded.
  const kept = await deps.approvals.approval(change.tenant, change.paymentId);
  const approval = kept === undefined ? undefined : approvalViewAt(kept, change.date);
  const recorded = await recordStatusChangeForFirstDeliveries(deps, change, approval);
  const type = approvalEventTypeOf(change);
  if (type === undefined || approval === undefined) return recorded;
  // After the status change, so a receiver of both hears of the change first.
  const told = await recordForFirstDeliveries(deps, change.tenant, type, (now) =>
    approvalEventRecord(type, change, approval, now),
  );
  return {
    ...recorded,
    first: [...recorded.first, ...told.first],
    queued: [...recorded.queued, ...told.queued],
  };
};

/** The completed batches, which every batch completion from the bus is checked against. */
export interface CompletedBatches {
  /** The tenant's batch if it is completed, else undefined (unknown, another tenant's, or still open). */
  completed(tenant: string, batchId: string): Promise<CompletedBatch | undefined>;
}

/**
 * A batch completion as it comes off the bus: recorded only when the table holds that tenant's
 * batch completed at that time, described from the table (the bus carries identifiers only), under
 * the id the publisher derived from the batch. Anything else is dropped and reported.
 */
export const recordBatchCompletedFromBus = async (
  deps: RecordingDependencies & {
    batches: CompletedBatches;
    onForged: (event: unknown, reason: ForgedReason) => void;
  },
  event: unknown,
): Promise<RecordedEvent | undefined> => {
  const { eventId, tenant, batchId, completedAt } = (event ?? {}) as Record<string, unknown>;
  if (typeof tenant !== 'string' || typeof batchId !== 'string' || typeof completedAt !== 'string') {
    deps.onForged(event, 'malformed');
    return undefined;
  }
  const batch = await deps.batches.completed(tenant, batchId);
  if (
    batch === undefined ||
    batch.completedAt !== completedAt ||
    eventId !== batchCompletedEventId(tenant, batchId)
  ) {
    deps.onForged(event, batch === undefined ? 'unknown-transfer' : 'not-in-history');
    return undefined;
  }
  return recordForFirstDeliveries(deps, tenant, BATCH_COMPLETED_TYPE, (now) =>
    batchCompletedEventRecord(eventId, batch, now),
  );
};

/**
 * Disables the endpoint and says so with an event to the tenant's other endpoints and the events
 * API. The event is recorded first: its id is fixed per endpoint, so a crash in between is made
 * good by the next failure without a second event.
 */
const disableEndpoint = async (
  deps: DeliveryDependencies,
  endpoint: WebhookEndpointRecord,
  reason: 'gone' | 'failing',
): Promise<void> => {
  let disabledAt = deps.clock.now();
  await recordEvent(
    deps,
    (createdAt) => {
      disabledAt = createdAt;
      return endpointDisabledEventRecord(endpoint.tenant, endpoint, reason, createdAt);
    },
    { exceptEndpoint: endpoint.id },
  );
  if (await deps.endpoints.disable(endpoint.tenant, endpoint.id, reason, disabledAt)) {
    deps.onEndpointDisabled?.(endpoint, reason);
  }
};

export type AttemptResult = 'delivered' | 'retrying' | 'failed' | 'dropped' | 'taken';

const ERROR_TEXT_MAX = 256;

/** Where an attempt's outcome goes: a claimed delivery of the queue, or a first delivery in no table yet. */
interface AttemptOutcomes {
  /** A first delivery's: its first attempt is filed under its event's createdAt. */
  first?: boolean;
  delivered(attempts: number): Promise<void>;
  retry(attempts: number, at: Date): Promise<void>;
  failed(attempts: number): Promise<void>;
}

/** Sends the event to the endpoint once, records the attempt, and settles the outcome. */
const attemptOnce = async (
  deps: DeliveryDependencies,
  endpoint: WebhookEndpointRecord,
  event: WebhookEventRecord,
  attemptsBefore: number,
  outcomes: AttemptOutcomes,
): Promise<AttemptResult> => {
  const attemptedAt = deps.clock.now();
  const secrets = await openLiveSecrets(deps.secrets, endpoint, attemptedAt);
  const response = await deps.sender.send({
    url: endpoint.url,
    headers: signedHeaders(event.id, attemptedAt, event.body, secrets),
    body: event.body,
    allowLoopback: isLocalReceiver(new URL(endpoint.url), deps.urlPolicy),
    tenant: endpoint.tenant,
  });
  const attempts = attemptsBefore + 1;
  const verdict = verdictOf(response.httpStatus);
  // The outcome first, then the attempt: a first delivery's recorded attempt says it was made
  // (see firstDeliveryMade), so its retry must be queued by then.
  const recordAttempt = () =>
    deps.deliveries.recordAttempt(
      endpoint.tenant,
      endpoint.id,
      {
        eventId: event.id,
        attempt: attempts,
        attemptedAt: attemptedAt.toISOString(),
        durationMs: Math.max(0, Math.round(response.durationMs)),
        ...(response.httpStatus !== undefined && { httpStatus: response.httpStatus }),
        ...(response.error !== undefined && { error: response.error.slice(0, ERROR_TEXT_MAX) }),
        outcome: verdict === 'delivered' ? 'delivered' : 'failed',
      },
      attemptsBefore === 0 && outcomes.first ? { createdAt: event.createdAt } : undefined,
    );

  const now = deps.clock.now();
  if (verdict === 'delivered') {
    await outcomes.delivered(attempts);
    await recordAttempt();
    if (endpoint.failingSince !== undefined)
      await deps.endpoints.markSucceeding(endpoint.tenant, endpoint.id);
    return 'delivered';
  }
  if (verdict === 'gone') {
    await outcomes.failed(attempts);
    await recordAttempt();
    await disableEndpoint(deps, endpoint, 'gone');
    return 'failed';
  }
  const next = nextAttemptAt(deps.policy, attempts, now);
  if (next === undefined) await outcomes.failed(attempts);
  else await outcomes.retry(attempts, next);
  await recordAttempt();
  if (next !== undefined)
    await deps.waker?.wakeAt({ tenant: endpoint.tenant, endpointId: endpoint.id, eventId: event.id }, next);
  const failingSince = await deps.endpoints.markFailing(endpoint.tenant, endpoint.id, now);
  if (failingSince !== undefined && failedTooLong(deps.policy, failingSince, now)) {
    await disableEndpoint(deps, endpoint, 'failing');
  }
  return next === undefined ? 'failed' : 'retrying';
};

/**
 * One attempt of one delivery. It is claimed first (a worker that dies holding it loses nothing:
 * the claim ends and it is due again); a delivery whose endpoint is gone or disabled, or whose
 * event has expired, leaves the queue untried.
 */
export const attemptDelivery = async (
  deps: DeliveryDependencies,
  delivery: PendingDelivery,
): Promise<AttemptResult> => {
  const claimedAt = deps.clock.now();
  const until = new Date(claimedAt.getTime() + CLAIM_SECONDS * 1000);
  if (!(await deps.deliveries.claim(delivery, until))) return 'taken';
  const claimed: PendingDelivery = { ...delivery, dueAt: until.toISOString() };

  const endpoint = await deps.endpoints.get(delivery.tenant, delivery.endpointId);
  const event = await deps.events.get(delivery.tenant, delivery.eventId, claimedAt);
  if (
    endpoint === undefined ||
    endpoint.status !== 'enabled' ||
    event === undefined ||
    !receivesType(endpoint, event.type)
  ) {
    await deps.deliveries.finish(claimed, delivery.attempts, 'dropped');
    return 'dropped';
  }
  return attemptOnce(deps, endpoint, event, delivery.attempts, {
    delivered: (attempts) => deps.deliveries.finish(claimed, attempts, 'delivered'),
    retry: (attempts, at) => deps.deliveries.retryAt(claimed, attempts, at),
    failed: (attempts) => deps.deliveries.finish(claimed, attempts, 'failed'),
  });
};

/**
 * The first attempt of a delivery in no table (see FirstDelivery), with the endpoint and event
 * its recording read: delivered, it leaves nothing but its attempt; otherwise it is queued for its
 * retry (with the attempt counted), as a claimed delivery would be. Should the attempt itself
 * fail (not the endpoint: the service), the delivery is queued due now; rejects only when that
 * fails too.
 */
export const attemptFirstDelivery = async (
  deps: DeliveryDependencies,
  { endpoint, event }: FirstDelivery,
): Promise<AttemptResult> => {
  const delivery = { tenant: endpoint.tenant, endpointId: endpoint.id, eventId: event.id };
  try {
    return await attemptOnce(deps, endpoint, event, 0, {
      first: true,
      delivered: async () => {},
      retry: async (attempts, at) => {
        await deps.deliveries.queue(delivery, at, false, attempts);
      },
      // Given up at once (410 Gone, or a schedule without retries): nothing waits.
      failed: async () => {},
    });
  } catch (error) {
    if (!(await deps.deliveries.queue(delivery, deps.clock.now(), false).catch(() => false))) throw error;
    return 'retrying';
  }
};
