import type { DeliveryAttempt, WebhookEndpointRecord } from './webhook-endpoint.ts';
import type { WebhookEventRecord, WebhookEventType } from './webhook-event.ts';

/** A delivery of one event to one endpoint while it waits for its next attempt. */
export interface PendingDelivery {
  tenant: string;
  endpointId: string;
  eventId: string;
  /** Attempts made so far. */
  attempts: number;
  /** When it is due; while a worker holds it, the end of that worker's claim. */
  dueAt: string;
}

/** A tenant's webhook endpoints. */
export interface WebhookEndpointStore {
  /**
   * Stores a new endpoint unless the tenant has `maxPerTenant` already (false then); the count is
   * held by a conditional write, so parallel creations never pass it.
   */
  create(endpoint: WebhookEndpointRecord, maxPerTenant: number): Promise<boolean>;
  get(tenant: string, id: string): Promise<WebhookEndpointRecord | undefined>;
  /** Oldest first, after the endpoint id `after`; `next` when more may follow. */
  page(
    tenant: string,
    after: string | undefined,
    limit: number,
  ): Promise<{ endpoints: WebhookEndpointRecord[]; next?: string }>;
  /** Every endpoint of the tenant (at most MAX_ENDPOINTS_PER_TENANT and a few). */
  all(tenant: string): Promise<WebhookEndpointRecord[]>;
  /** Replaces the endpoint if it still has `expectedRevision`; false otherwise. */
  replace(endpoint: WebhookEndpointRecord, expectedRevision: number): Promise<boolean>;
  /** False when there was none. */
  delete(tenant: string, id: string): Promise<boolean>;
  /** Notes a failed attempt: answers since when the endpoint fails (kept from the first failure). */
  markFailing(tenant: string, id: string, now: Date): Promise<string | undefined>;
  /** Notes a delivered attempt: the endpoint fails no more. */
  markSucceeding(tenant: string, id: string): Promise<void>;
  /** Disables an enabled endpoint; false when it was disabled or gone already. */
  disable(tenant: string, id: string, reason: 'gone' | 'failing', now: Date): Promise<boolean>;
}

export interface EventPageRequest {
  tenant: string;
  type?: WebhookEventType;
  paymentId?: string;
  /** Only events recorded at or after this time. */
  createdAtFrom?: string;
  /** Only events recorded before this time (the settle horizon: see EVENT_SETTLE_MS). */
  createdBefore: string;
  /** Continue strictly after this position (the list order value of the last event read). */
  after?: string;
  limit: number;
  /** Events past their expiry are not listed, whether or not TTL has removed them yet. */
  now: Date;
}

/** The events kept for the events API and for deliveries. */
export interface WebhookEventStore {
  /**
   * Stores the event unless one with its id is kept already: false then (the first one stays).
   * Called right after the event's `createdAt` is taken; a first write not done within
   * EVENT_WRITE_LIMIT_MS is given up (it throws), so no event shows up in the list later than
   * that after its `createdAt`.
   */
  putIfAbsent(event: WebhookEventRecord): Promise<boolean>;
  get(tenant: string, id: string, now: Date): Promise<WebhookEventRecord | undefined>;
  /** Oldest first; `next` (a position) when more may follow. */
  page(request: EventPageRequest): Promise<{ events: WebhookEventRecord[]; next?: string }>;
}

/** The persisted delivery queue: what is due when, and the attempts made. */
export interface WebhookDeliveryStore {
  /**
   * Queues the event for the endpoint, due at `dueAt`, with `attempts` made so far (0 unless
   * given); unless `again`, an existing delivery stays as it is (false).
   */
  queue(
    delivery: Pick<PendingDelivery, 'tenant' | 'endpointId' | 'eventId'>,
    dueAt: Date,
    again: boolean,
    attempts?: number,
  ): Promise<boolean>;
  /**
   * Deliveries due at `now`, at most `limit`: the tenants in turns, and each endpoint's oldest due
   * first. The endpoints `isFull` names (no room for another attempt now) are passed over unread,
   * and what one look reads is bounded whatever one tenant's or endpoint's backlog: a tenant's
   * due delivery never waits behind another tenant's queue.
   */
  due(
    now: Date,
    limit: number,
    isFull?: (tenant: string, endpointId: string) => boolean,
  ): Promise<PendingDelivery[]>;
  /** Takes the delivery until `until`, if it is still as seen; false when someone else took or changed it. */
  claim(delivery: PendingDelivery, until: Date): Promise<boolean>;
  /** Sets the next attempt of a claimed delivery (`claimed` as the claim left it). */
  retryAt(claimed: PendingDelivery, attempts: number, dueAt: Date): Promise<void>;
  /** Ends a claimed delivery: it leaves the queue. */
  finish(
    claimed: PendingDelivery,
    attempts: number,
    outcome: 'delivered' | 'failed' | 'dropped',
  ): Promise<void>;
  /**
   * Makes every claimed delivery due at `now`: for the local runtime at start, when no worker can
   * still hold a claim, so a delivery cut short by a crash goes out at once rather than when its
   * claim would have ended. Answers how many it released.
   */
  releaseClaims(now: Date): Promise<number>;
  /**
   * Records an attempt. A first delivery's (see FirstDelivery) is filed under its event's
   * `createdAt` (`firstOf`) rather than its own time, so firstDeliveryMade can find it.
   */
  recordAttempt(
    tenant: string,
    endpointId: string,
    attempt: DeliveryAttempt,
    firstOf?: { createdAt: string },
  ): Promise<void>;
  /**
   * Whether the event's first delivery to the endpoint was made (its first attempt recorded) or
   * the delivery is queued (or was: a finished delivery is kept).
   */
  firstDeliveryMade(
    delivery: Pick<PendingDelivery, 'tenant' | 'endpointId' | 'eventId'>,
    eventCreatedAt: string,
  ): Promise<boolean>;
  /** The endpoint's most recent attempts, newest first. */
  attempts(tenant: string, endpointId: string, limit: number): Promise<DeliveryAttempt[]>;
}

/**
 * Wakes the retry sender when a delivery falls due: a retry goes out about on time without a
 * worker looking at the queue every second. A wake-up lost is no delivery lost: the delivery
 * stays due in the queue, and the sender's periodic look finds it.
 */
export interface DeliveryWaker {
  wakeAt(delivery: Pick<PendingDelivery, 'tenant' | 'endpointId' | 'eventId'>, dueAt: Date): Promise<void>;
}

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** The local runtime's own receiver: a loopback address is the one allowed then. */
  allowLoopback: boolean;
  /** Whose endpoint it is: attempts waiting for a connection are let through in tenant turns. */
  tenant?: string;
}

/** An answer (its status), or why there was none; never throws. */
export interface WebhookResponse {
  httpStatus?: number;
  error?: string;
  durationMs: number;
}

export interface WebhookSender {
  send(request: WebhookRequest): Promise<WebhookResponse>;
}
