import type { PendingApproval } from '../payment-controls/approval.ts';
import type { LimitHold } from '../payment-controls/limits.ts';
import type { CreditTransferRequest, CreditTransferStatus, ServicerHeaders } from './credit-transfer.ts';
import type { LifecycleStart } from './lifecycle.ts';

/** One entry of a transfer's history: every status change, who caused it, and when. */
export interface StatusChange {
  status: CreditTransferStatus;
  statusReason?: string;
  /** The reason's ISO ExternalStatusReason1Code, present whenever `statusReason` is. */
  statusReasonCode?: string;
  date: string;
  /** The client id that caused the change, or `rail` / `workflow` for the service itself. */
  actor: string;
}

/**
 * The message a transfer came in, as its status reports name it: a pain.001 (its GrpHdr, PmtInf
 * and PmtId) or a JSON batch. Absent on a transfer initiated alone by the JSON API.
 */
export interface OriginalMessage {
  /** `GrpHdr/MsgId`, or the JSON batch's compact batchId. */
  messageId: string;
  /** `pain.001.001.03`, `pain.001.001.09`, or the JSON batch's name. */
  messageName: string;
  /** `GrpHdr/CreDtTm` as written. */
  createdAt?: string;
  /** `PmtInf/PmtInfId`. */
  paymentInformationId?: string;
  /** `PmtId/InstrId`, `PmtId/EndToEndId`, `PmtId/UETR` as written. */
  instructionId?: string;
  endToEndId?: string;
  uetr?: string;
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
  /** The reason's ISO ExternalStatusReason1Code (absent on transfers stored before codes were kept). */
  statusReasonCode?: string;
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
  /** The batch message it came in, when it came in one (its pain.002 names that message). */
  origin?: OriginalMessage;
  /**
   * What the service says of the transfer beside its fields, for a pain.002's `AddtlInf` (a
   * pain.001 group's past ReqdExctnDt, executed on receipt).
   */
  additionalInformation?: string;
  /** The batch it belongs to and its position there (from 0): its final status counts once toward the batch's outcome. */
  batch?: { batchId: string; position: number };
  history: StatusChange[];
  /** The cancellation the client asked for; kept once recorded, whatever the outcome. */
  cancellation?: CancellationRequest;
  /**
   * When the workflow claimed the submission to clearing (while AcceptedCustomerProfile, with no
   * cancellation requested); from then on clearing may have the payment, and a cancellation wins
   * only by a recall.
   */
  submittedAt?: string;
  /**
   * Which step invocation holds the submission claim: only that one calls the rail's submit. Any
   * other (a second execution, a retry, a restart) asks clearing instead (see `SubmissionClaim`).
   */
  submissionClaim?: string;
  /** How many history entries have been published as status events (a prefix of the history). */
  publishedCount?: number;
  /**
   * When the reconciler looks at the transfer next unless it progresses first. Set while the
   * transfer is not final or not every change is published yet; absent afterwards.
   */
  nextCheckAt?: string;
  /**
   * Executions started by the reconciler since the transfer last moved on (a status change, or a
   * wait for something known); the workflow's first execution is not counted.
   */
  stalledAttempts?: number;
  /** The approval the transfer waited or waits for (payment controls); kept once decided. */
  approval?: PendingApproval;
  /** Where the transfer stands with the limits of the tenant's payment controls, when any covered it. */
  limits?: LimitHold;
  /** Set while the transfer waits for an operator (`npm run transfers`): nothing drives it on meanwhile. */
  parked?: ParkedMark;
}

/** Why and since when a transfer waits for an operator. */
export interface ParkedMark {
  /** When it was parked, ISO 8601. */
  at: string;
  /** Executions it had without moving on. */
  attempts: number;
  /** The error of the last failed step (its name only), or `NoProgress` when none was caught. */
  reason: string;
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

/** A claim of the submission to clearing: when, and by which step invocation (a random id of its own). */
export interface SubmissionClaim {
  at: Date;
  id: string;
}

/** A status change the lifecycle makes: leaving exactly `from`, so no race can skip or reverse a step. */
export interface StatusTransition {
  from: CreditTransferStatus;
  /**
   * The changes the transfer passes through on its way from `from` to `change`, each one step of
   * the lifecycle, recorded in this order before `change` in the same write (technical validation,
   * decided before the customer-profile check whose outcome is `change`).
   */
  through?: readonly StatusChange[];
  change: StatusChange;
  /** Refuse the change when a cancellation has been requested (it wins before settlement). */
  unlessCancellationRequested?: boolean;
  /** Refuse the change unless the submission to clearing is claimed (`claimed`) or not (`unclaimed`). */
  submission?: 'claimed' | 'unclaimed';
  /**
   * The next recovery check; ignored once every change of a final transfer is published. Without
   * one the check stays where it is (the write then moves no recovery index entry), and the write
   * is refused unless the transfer has a check and is not parked.
   */
  nextCheckAt?: Date;
  /**
   * Claims the submission to clearing in the same write (see `claimSubmission`), for a transfer
   * that goes to clearing right after this change; needs `unlessCancellationRequested`.
   */
  claimSubmission?: SubmissionClaim;
  /** How many history entries are published by now, noted in the same write (a publish step wrote nothing). */
  publishedCount?: number;
  /** Only while the transfer is parked, and unparks it in the same write (an operator's decision). */
  whileParked?: boolean;
  /** Replaces the limit hold in the same write, only while it is in state `from`. */
  limits?: { from: LimitHold['state']; to: LimitHold };
  /** Sets the approval the transfer waits for (a limit's breach that asks for one). */
  approval?: PendingApproval;
}

/** The writes of the lifecycle; every one is conditional, so a re-run after a crash is harmless. */
export interface LifecycleStore {
  get(tenant: string, paymentId: string): Promise<CreditTransferRecord | undefined>;
  /** Applies the transition and appends its changes to the history; the updated record, or undefined when the condition failed. */
  transition(
    tenant: string,
    paymentId: string,
    transition: StatusTransition,
  ): Promise<CreditTransferRecord | undefined>;
  /**
   * Claims the submission to clearing: sets `submittedAt` and `submissionClaim` while the transfer
   * is AcceptedCustomerProfile with no cancellation requested and no claim yet. The updated record,
   * or undefined when refused.
   */
  claimSubmission(
    tenant: string,
    paymentId: string,
    claim: SubmissionClaim,
  ): Promise<CreditTransferRecord | undefined>;
  /**
   * Takes over a claim whose holder can no longer be submitting (its lease ended) and which
   * clearing does not have: only while the claim is still the one made at `claimedAt` and the
   * transfer still AcceptedCustomerProfile. The updated record, or undefined when refused.
   */
  retakeSubmission(
    tenant: string,
    paymentId: string,
    claimedAt: string,
    claim: SubmissionClaim,
  ): Promise<CreditTransferRecord | undefined>;
  /**
   * Replaces the transfer's limit hold while it is in state `from` (and, for a claim of its
   * release, still the claim made at `since`) in one conditional write, and
   * while the transfer is in `status` when given; moves the next recovery check when given. The
   * updated record, or undefined when refused.
   */
  updateLimits(
    tenant: string,
    paymentId: string,
    from: LimitHold['state'] | { state: 'releasing'; since: string },
    to: LimitHold,
    nextCheckAt?: Date,
    status?: CreditTransferStatus,
  ): Promise<CreditTransferRecord | undefined>;
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
  /**
   * Parks the transfer for an operator while it is in `status`, not parked and in recovery: it
   * leaves the recovery queue for the parked list. False when any of that no longer holds.
   */
  park(tenant: string, paymentId: string, status: CreditTransferStatus, mark: ParkedMark): Promise<boolean>;
}

/** The operator's view of parked transfers. */
export interface ParkedTransfers {
  /** Parked transfers, longest parked first; at most `limit`. */
  parked(limit: number): Promise<CreditTransferRecord[]>;
  /**
   * Back into recovery, due at `dueAt`, with its count of stalled attempts cleared: the
   * reconciler starts it again on its next run. False when it is not parked.
   */
  unpark(tenant: string, paymentId: string, dueAt: Date): Promise<boolean>;
}

/** A transfer parked for an operator, as published for whoever watches the service. */
export interface TransferParkedEvent {
  eventId: string;
  tenant: string;
  paymentId: string;
  status: CreditTransferStatus;
  parked: ParkedMark;
}

/** Tells operators' tooling that a transfer was parked (one event per parking). */
export interface OperationsEventPublisher {
  publishParked(event: TransferParkedEvent): Promise<void>;
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
  /** How many transfers are parked (they are in no shard `due` reads). */
  countParked(): Promise<number>;
}

/** Starts the lifecycle workflow of a transfer; a start under a name already used is a no-op. */
export interface WorkflowStarter {
  start(start: LifecycleStart): Promise<void>;
  /**
   * True when an execution for the transfer is known to be waiting its turn or running, so a
   * recovery start would only repeat it. The local runner knows (it queues executions when the
   * machine is busy); Step Functions does not say, and starts at once.
   */
  isDriving?(transfer: { tenant: string; paymentId: string }): boolean;
}

/**
 * Publishes the unpublished changes of a transfer held for approval (its change to Pending), so
 * approvers hear of it, without any workflow execution: nothing runs while it waits. Asynchronous
 * (the publish step's function, invoked as an event): a call that returns has only queued it.
 */
export interface PendingAnnouncer {
  announce(transfer: { tenant: string; paymentId: string }): Promise<void>;
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
  statusReasonCode?: string;
  date: string;
  actor: string;
}

/**
 * Told of each final transfer before it leaves the recovery index, as often as a publish step
 * runs for it: a transfer of a batch is counted toward the batch's outcome once.
 */
export interface FinalTransferListener {
  transferFinal(record: CreditTransferRecord): Promise<void>;
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

/** A refusal's reason: its ISO name, and the ISO code when the rail gives one (passed through as is). */
export interface RailRefusal {
  reason: string;
  reasonCode?: string;
}

export type CustomerProfileCheck = { accepted: true } | ({ accepted: false } & RailRefusal);

export type ClearingStatus =
  /** Clearing has no submission of the payment. */
  | { state: 'unknown' }
  | { state: 'pending' }
  | { state: 'settled' }
  | ({ state: 'rejected' } & RailRefusal)
  | { state: 'recalled' };

/**
 * The payment rail: customer-profile checks (account status, ownership, funds, screening),
 * submission to clearing and its status. The sandbox implements it, and the bank connector (connector-rail.ts) on production stages.
 */
export interface Rail {
  checkCustomerProfile(payment: RailPayment): Promise<CustomerProfileCheck>;
  /**
   * Submits to clearing; idempotent by paymentId. The lifecycle calls it from one claim at a time;
   * the rail's own retries of one call may repeat it.
   */
  submit(payment: RailPayment): Promise<void>;
  /** Where clearing stands with the payment; `unknown` when it has no submission of it. */
  clearingStatus(payment: RailPayment): Promise<ClearingStatus>;
  /** Asks clearing to take the payment back: `recalled`, or `settled` when it is too late. */
  recall(payment: RailPayment): Promise<'recalled' | 'settled'>;
}
