import type { ClientRecord } from './client.ts';
import type { CreditTransferRequest, CreditTransferStatus, ServicerHeaders } from './credit-transfer.ts';
import type { LifecycleStart } from './lifecycle.ts';
import type { JsonWebKeySet, SigningKeySchedule } from './token-signer.ts';
import type { DeliveryAttempt, WebhookEndpointRecord } from './webhook-endpoint.ts';
import type { WebhookEventRecord, WebhookEventType } from './webhook-event.ts';

/** One entry of a transfer's history: every status change, who caused it, and when. */
export interface StatusChange {
  status: CreditTransferStatus;
  statusReason?: string;
  date: string;
  /** The client id that caused the change, or `rail` / `workflow` for the service itself. */
  actor: string;
}

/** A credit transfer as the service keeps it. */
export interface CreditTransferRecord {
  tenant: string;
  paymentId: string;
  clientId: string;
  /** Initiation time, ISO 8601 with milliseconds; never changes. */
  createdAt: string;
  status: CreditTransferStatus;
  statusReason?: string;
  /** Time of the current status (the `date` of the status report). */
  statusDate: string;
  /** Fingerprint of the initiation request, to tell a replay from a reused idempotency key. */
  requestHash: string;
  /** Unique to the request that wrote the item: tells its own retried write from anyone else's. */
  writeId?: string;
  idempotencyKey?: string;
  servicer: ServicerHeaders;
  /** The transfer exactly as the client sent it. */
  transfer: CreditTransferRequest;
  history: StatusChange[];
  /** The cancellation the client asked for; kept once recorded, whatever the outcome. */
  cancellation?: CancellationRequest;
  /**
   * When the workflow claimed the submission to clearing (while AcceptedCustomerProfile, with no
   * cancellation requested); from then on clearing may have the payment, and a cancellation wins
   * only by a recall.
   */
  submittedAt?: string;
  /** How many history entries have been published as status events (a prefix of the history). */
  publishedCount?: number;
  /**
   * When the reconciler looks at the transfer next unless it progresses first. Set while the
   * transfer is not final or not every change is published yet; absent afterwards.
   */
  nextCheckAt?: string;
}

export interface CancellationRequest {
  reason?: string;
  /** When it was received, ISO 8601. */
  date: string;
  clientId: string;
  idempotencyKey?: string;
  servicer?: ServicerHeaders;
}

export interface CreditTransferStore {
  /** Stores a new transfer in one conditional write; `false` when its paymentId is taken already. */
  create(record: CreditTransferRecord): Promise<boolean>;
  /** The transfer, read strongly consistent, or undefined (also for another tenant's id). */
  get(tenant: string, paymentId: string): Promise<CreditTransferRecord | undefined>;
}

/** A status change the lifecycle makes: leaving exactly `from`, so no race can skip or reverse a step. */
export interface StatusTransition {
  from: CreditTransferStatus;
  change: StatusChange;
  /** Refuse the change when a cancellation has been requested (it wins before settlement). */
  unlessCancellationRequested?: boolean;
  /** Refuse the change unless the submission to clearing is claimed (`claimed`) or not (`unclaimed`). */
  submission?: 'claimed' | 'unclaimed';
  /** The next recovery check; ignored once every change of a final transfer is published. */
  nextCheckAt: Date;
  /**
   * Claims the submission to clearing in the same write (see `claimSubmission`), for a transfer
   * that goes to clearing right after this change; needs `unlessCancellationRequested`.
   */
  claimSubmissionAt?: Date;
  /** How many history entries are published by now, noted in the same write (a publish step wrote nothing). */
  publishedCount?: number;
}

/** The writes of the lifecycle; every one is conditional, so a re-run after a crash is harmless. */
export interface LifecycleStore {
  get(tenant: string, paymentId: string): Promise<CreditTransferRecord | undefined>;
  /** Applies the transition and appends it to the history; the updated record, or undefined when the condition failed. */
  transition(
    tenant: string,
    paymentId: string,
    transition: StatusTransition,
  ): Promise<CreditTransferRecord | undefined>;
  /**
   * Claims the submission to clearing: sets `submittedAt` while the transfer is
   * AcceptedCustomerProfile with no cancellation requested and no claim yet. The updated record,
   * or undefined when refused.
   */
  claimSubmission(tenant: string, paymentId: string, at: Date): Promise<CreditTransferRecord | undefined>;
  /** Records a cancellation request unless one is recorded or the transfer is final (or unknown): then undefined. */
  requestCancellation(
    tenant: string,
    paymentId: string,
    request: CancellationRequest,
    nextCheckAt: Date,
  ): Promise<CreditTransferRecord | undefined>;
  /** Moves the next recovery check, while the transfer waits for something known (a value date, clearing). */
  scheduleCheck(tenant: string, paymentId: string, nextCheckAt: Date): Promise<void>;
  /**
   * Notes that the first `count` history entries are published; a final transfer fully published
   * leaves recovery. False when the transfer is not as the caller saw it (a later count noted, or
   * not final with exactly `count` entries when `final`).
   */
  markPublished(tenant: string, paymentId: string, count: number, final: boolean): Promise<boolean>;
}

/** A transfer the reconciler should look at: not final (or not fully published) and due. */
export interface RecoveryCandidate {
  tenant: string;
  paymentId: string;
  /** The due time the candidate was found under; claiming it is conditional on it. */
  dueAt: string;
}

export interface RecoveryQueue {
  /** Candidates due at `before`, or every candidate when `before` is undefined; at most `limit`. */
  due(before: Date | undefined, limit: number): Promise<RecoveryCandidate[]>;
  /** Takes the candidate for one recovery attempt: its number, or undefined when someone else moved it first. */
  claim(candidate: RecoveryCandidate, nextCheckAt: Date): Promise<number | undefined>;
  /** Looks again later without starting anything; false when someone else moved it first. */
  defer(candidate: RecoveryCandidate, nextCheckAt: Date): Promise<boolean>;
  /**
   * Makes the recovery index agree with the records, which are the truth, after a crash kept one
   * half of a write and lost the other: a transfer still needing work gets exactly one entry, due
   * at `now`; a finished one none; an entry without a record goes. Answers how many transfers (or
   * entries without one) it repaired. Only while nothing else drives transfers (at start).
   */
  realign(now: Date): Promise<number>;
}

/** Starts the lifecycle workflow of a transfer; a start under a name already used is a no-op. */
export interface WorkflowStarter {
  start(start: LifecycleStart): Promise<void>;
}

/** A status change as published to consumers; `eventId` is stable across retries, for deduplication. */
export interface StatusChangedEvent {
  eventId: string;
  tenant: string;
  paymentId: string;
  /** Position of the change in the transfer's history, from 0 (Received): grows with every change. */
  sequence: number;
  status: CreditTransferStatus;
  /** The status the change left (none for Received). */
  previousStatus?: CreditTransferStatus;
  statusReason?: string;
  date: string;
  actor: string;
}

export interface StatusEventPublisher {
  /** Publishes every event or throws; a retry may publish some twice. */
  publish(events: readonly StatusChangedEvent[]): Promise<void>;
}

/** What the rail needs to know of a transfer. */
export interface RailPayment {
  tenant: string;
  paymentId: string;
  clientId: string;
  transfer: CreditTransferRequest;
}

export type CustomerProfileCheck = { accepted: true } | { accepted: false; reason: string };

export type ClearingStatus =
  | { state: 'pending' }
  | { state: 'settled' }
  | { state: 'rejected'; reason: string }
  | { state: 'recalled' };

/**
 * The payment rail: customer-profile checks (account status, ownership, funds, screening),
 * submission to clearing and its status. The sandbox implements it, and the bank connector (connector-rail.ts) on production stages.
 */
export interface Rail {
  checkCustomerProfile(payment: RailPayment): Promise<CustomerProfileCheck>;
  /** Submits to clearing; idempotent by paymentId. */
  submit(payment: RailPayment): Promise<void>;
  clearingStatus(payment: RailPayment): Promise<ClearingStatus>;
  /** Asks clearing to take the payment back: `recalled`, or `settled` when it is too late. */
  recall(payment: RailPayment): Promise<'recalled' | 'settled'>;
}

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** Where clients live: the token endpoint reads them, registration and administration write them. */
export interface ClientStore {
  get(clientId: string): Promise<ClientRecord | undefined>;
  /** Stores the client, replacing one with the same id. */
  put(client: ClientRecord): Promise<void>;
  /** Stores a new client; `false` when the id is taken already. */
  create(client: ClientRecord): Promise<boolean>;
  /** Replaces the client only if it still has `expectedRevision` (undefined: none yet); `false` otherwise. */
  update(client: ClientRecord, expectedRevision: number | undefined): Promise<boolean>;
  /** Every client, ordered by id. */
  list(): Promise<ClientRecord[]>;
}

/** What one client authentication attempt may do. */
export type AuthenticationAttempt = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** Who is authenticating: the client id sent (known or not) and the address the request came from. */
export interface AuthenticationCaller {
  clientId: string;
  sourceAddress: string;
}

/**
 * Failed client authentications per client id and source address, in a window that ends by itself.
 * Only a failure counts, once the secret is known to be wrong: a request in flight or a correct
 * secret never does, and failures from one address never refuse another.
 */
export interface AuthenticationThrottle {
  /** Before the secret is checked: refused once the caller has reached the limit in its window. */
  check(caller: AuthenticationCaller, now: Date): Promise<AuthenticationAttempt & { failures: number }>;
  failed(caller: AuthenticationCaller, now: Date): Promise<void>;
  /** After a correct secret, when `check` saw failures: the count starts again. */
  succeeded(caller: AuthenticationCaller): Promise<void>;
}

/** A change an operator made to a client; never carries a secret or a hash. */
export interface ClientAuditEvent {
  eventId: string;
  action: 'ClientCreated' | 'ClientReplaced' | 'ClientDisabled' | 'ClientSecretRotated';
  clientId: string;
  tenant: string;
  scopes: string[];
  /** Who made the change: the operator's identity as the tool could establish it. */
  actor: string;
  date: string;
  /** On a rotation: until when the previous secret still works (absent: not at all). */
  previousSecretExpiresAt?: string;
}

export interface ClientAuditPublisher {
  /** Publishes the event or throws. */
  publish(event: ClientAuditEvent): Promise<void>;
}

/** Signs access tokens (RS256) with one key. On AWS the private key stays in KMS; locally it is a key file. */
export interface TokenSigner {
  /** The `kid` of the key that signs now. */
  keyId(): Promise<string>;
  /** RSASSA-PKCS1-v1_5 with SHA-256 over the JWS signing input. */
  sign(signingInput: Buffer): Promise<Buffer>;
  publicJwks(): Promise<JsonWebKeySet>;
}

/**
 * The token keys: the one that signs now, and every key a token may be verified with (the key set):
 * the signing key, and during a rotation the one before or after it, each with its `kid`.
 */
export interface TokenKeys {
  signingKey(): Promise<TokenSigner>;
  publicJwks(): Promise<JsonWebKeySet>;
}

/** Reads the signing key schedule (AWS) and changes it, only if unchanged since it was read. */
export interface SigningKeyScheduleStore {
  get(): Promise<SigningKeySchedule | undefined>;
  /** `false` when someone else changed it since `expectedRevision` (0: none stored yet). */
  put(schedule: SigningKeySchedule, expectedRevision: number): Promise<boolean>;
}

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
  create(endpoint: WebhookEndpointRecord): Promise<void>;
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
  /** Queues the event for the endpoint, due at `dueAt`; unless `again`, an existing delivery stays as it is (false). */
  queue(
    delivery: Pick<PendingDelivery, 'tenant' | 'endpointId' | 'eventId'>,
    dueAt: Date,
    again: boolean,
  ): Promise<boolean>;
  /** Deliveries due at `now`, oldest due first, at most `limit`. */
  due(now: Date, limit: number): Promise<PendingDelivery[]>;
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
  recordAttempt(tenant: string, endpointId: string, attempt: DeliveryAttempt): Promise<void>;
  /** The endpoint's most recent attempts, newest first. */
  attempts(tenant: string, endpointId: string, limit: number): Promise<DeliveryAttempt[]>;
}

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** The local runtime's own receiver: a loopback address is the one allowed then. */
  allowLoopback: boolean;
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
