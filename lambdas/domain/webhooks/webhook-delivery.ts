import type { Clock } from '../commons/ports.ts';
import type { StatusChangedEvent } from '../credit-transfers/ports.ts';
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
  endpointDisabledEventRecord,
  statusChangedEventRecord,
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
  const now = deps.clock.now();
  const endpoints = (await deps.endpoints.all(event.tenant)).filter(
    (endpoint) =>
      endpoint.status === 'enabled' &&
      receivesType(endpoint, event.type) &&
      endpoint.id !== options.exceptEndpoint,
  );
  const queued: PendingDelivery[] = [];
  for (const endpoint of endpoints) {
    const delivery = { tenant: event.tenant, endpointId: endpoint.id, eventId: event.id };
    if (await deps.deliveries.queue(delivery, now, false)) {
      queued.push({ ...delivery, attempts: 0, dueAt: now.toISOString() });
    }
  }
  return queued;
};

/** A status change from the workflow's events, kept and queued as a webhook event. */
export const recordStatusChange = (
  deps: RecordingDependencies,
  change: StatusChangedEvent,
): Promise<PendingDelivery[]> =>
  recordEvent(deps, (createdAt) => statusChangedEventRecord(change, createdAt));

/** What recording an event from the bus needs besides: the stored transfers, and who hears of a forgery. */
export type BusRecordingDependencies = RecordingDependencies & {
  histories: TransferHistories;
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
): Promise<PendingDelivery[]> => {
  const check = await checkStatusEvent(deps.histories, event);
  if (!check.accepted) {
    deps.onForged(event, check.reason);
    return [];
  }
  return recordStatusChange(deps, check.event);
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

  const attemptedAt = deps.clock.now();
  const secrets = await openLiveSecrets(deps.secrets, endpoint, attemptedAt);
  const response = await deps.sender.send({
    url: endpoint.url,
    headers: signedHeaders(event.id, attemptedAt, event.body, secrets),
    body: event.body,
    allowLoopback: isLocalReceiver(new URL(endpoint.url), deps.urlPolicy),
  });
  const attempts = delivery.attempts + 1;
  const verdict = verdictOf(response.httpStatus);
  await deps.deliveries.recordAttempt(delivery.tenant, delivery.endpointId, {
    eventId: event.id,
    attempt: attempts,
    attemptedAt: attemptedAt.toISOString(),
    durationMs: Math.max(0, Math.round(response.durationMs)),
    ...(response.httpStatus !== undefined && { httpStatus: response.httpStatus }),
    ...(response.error !== undefined && { error: response.error.slice(0, ERROR_TEXT_MAX) }),
    outcome: verdict === 'delivered' ? 'delivered' : 'failed',
  });

  const now = deps.clock.now();
  if (verdict === 'delivered') {
    await deps.deliveries.finish(claimed, attempts, 'delivered');
    if (endpoint.failingSince !== undefined)
      await deps.endpoints.markSucceeding(endpoint.tenant, endpoint.id);
    return 'delivered';
  }
  if (verdict === 'gone') {
    await deps.deliveries.finish(claimed, attempts, 'failed');
    await disableEndpoint(deps, endpoint, 'gone');
    return 'failed';
  }
  const next = nextAttemptAt(deps.policy, attempts, now);
  if (next === undefined) await deps.deliveries.finish(claimed, attempts, 'failed');
  else {
    await deps.deliveries.retryAt(claimed, attempts, next);
    await deps.waker?.wakeAt(delivery, next);
  }
  const failingSince = await deps.endpoints.markFailing(endpoint.tenant, endpoint.id, now);
  if (failingSince !== undefined && failedTooLong(deps.policy, failingSince, now)) {
    await disableEndpoint(deps, endpoint, 'failing');
  }
  return next === undefined ? 'failed' : 'retrying';
};
