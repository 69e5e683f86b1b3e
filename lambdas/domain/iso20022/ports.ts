import type { CreditTransferRecord } from '../credit-transfers/ports.ts';
import type { LimitRules } from '../payment-controls/initiation-controls.ts';

/** An XML element as the domain reads it: no library's node types leak past the reader. */
export interface XmlTree {
  /** Local name, without namespace. */
  name: string;
  /** Where it is: `/Document/CstmrCdtTrfInitn/PmtInf[1]/CdtTrfTxInf[2]`, positions from 1. */
  path: string;
  /** Its own text (trimmed), for a leaf. */
  text: string;
  attributes: Readonly<Record<string, string>>;
  children: readonly XmlTree[];
}

export const PAIN_001_VERSIONS = ['pain.001.001.09', 'pain.001.001.03'] as const;
export type Pain001Version = (typeof PAIN_001_VERSIONS)[number];

/**
 * Reads a pain.001: parsed without DTDs, entities or any fetch, and valid against the official
 * schema of its version, or an InvalidRequestError naming the XML path of each fault.
 */
export interface Pain001Reader {
  read(xml: string): Promise<{ version: Pain001Version; root: XmlTree }>;
}

/** A batch as the service keeps it: what the message said, and how far storing it got. */
export interface BatchRecord {
  tenant: string;
  batchId: string;
  clientId: string;
  createdAt: string;
  /** Fingerprint of the request: tells a replay from another request under the same key or MsgId. */
  requestHash: string;
  idempotencyKey?: string;
  /** `Storing` until every transfer is stored: a repeat of the same request finishes it. */
  state: 'Storing' | 'Stored';
  count: number;
  message: BatchMessageSummary;
  /**
   * The transfers its tenant's approval rules hold in Pending, fixed when the batch item is first
   * written (so a repeat of the request stores what the first attempt decided); absent: none held.
   */
  approvalHolds?: BatchApprovalHold[];
  /**
   * The tenant's limits when the batch item was first written: each transfer is counted against
   * them (by the batch's lifecycle starter, before it starts the transfer); absent: no limit.
   */
  limitRules?: LimitRules;
  /** Transfers not final yet (counted down once per transfer); absent on batches stored before outcomes were kept. */
  open?: number;
  /** Final transfers by status, and by ISO reason code (Rejected, Cancelled). */
  countsByStatus?: Record<string, number>;
  countsByReasonCode?: Record<string, number>;
  /** When the last transfer became final: the batch is `Completed`. */
  completedAt?: string;
  /** Its `credit-transfer-batch.completed` event is on the bus. */
  completionPublished?: boolean;
}

/** The transfers of a batch one approval rule holds, by their positions in the batch. */
export interface BatchApprovalHold {
  rule: string;
  approvalsRequired: number;
  expiresAt: string;
  positions: number[];
}

/** The original message, as reports name it. */
export interface BatchMessageSummary {
  /** `GrpHdr/MsgId`, or the batchId's compact form for JSON. */
  messageId: string;
  /** `pain.001.001.09`, `pain.001.001.03`, or the JSON batch's name. */
  messageName: string;
  createdAt?: string;
  controlSum?: string;
  /** Each payment group (`PmtInf`) in message order, with how many transfers it holds. */
  groups: BatchPaymentGroup[];
}

/** A payment group (`PmtInf`): its transfers, or its rejection (then `count` is 0: none was stored). */
export interface BatchPaymentGroup {
  paymentInformationId: string;
  count: number;
  /**
   * Its settled transfers are booked as one debit entry (camt.054), as `BtchBookg` asked; `true`
   * where the group did not say (the service's agreement, docs/iso20022.md). Absent on groups
   * stored before it was kept: booked one entry per transfer, as they always were.
   */
  batchBooking?: boolean;
  /** The whole group refused while the rest of the message was taken: a pain.002's `PmtInfSts` `RJCT`. */
  rejection?: PaymentGroupRejection;
}

export interface PaymentGroupRejection {
  /** ISO ExternalStatusReason1Code (`StsRsnInf/Rsn/Cd`). */
  statusReasonCode: string;
  statusReason: string;
  /** Said to the client in words (a pain.002's `StsRsnInf/AddtlInf`). */
  additionalInformation: string;
  /** How many `CdtTrfTxInf` the group held. */
  transactions: number;
}

export type ClaimResult =
  | { claimed: true }
  | { claimed: false; existing: { batchId: string; requestHash: string } };

export interface BatchStore {
  /**
   * Claims a message's MsgId for the tenant, for this batch (already created: a claim always
   * names a batch that exists); or the batch that holds it.
   */
  claimMessageId(
    tenant: string,
    messageId: string,
    batchId: string,
    requestHash: string,
  ): Promise<ClaimResult>;
  /** Stores the batch unless its id is taken; false when taken. */
  create(batch: BatchRecord): Promise<boolean>;
  /**
   * Removes a batch this request created and that holds nothing yet (`Storing`, with this
   * request's hash), when its MsgId turns out to be another batch's: its key is free again.
   */
  discard(tenant: string, batchId: string, requestHash: string): Promise<void>;
  get(tenant: string, batchId: string): Promise<BatchRecord | undefined>;
  /** Moves the batch from `Storing` to `Stored`: true for the call that moved it, false when it was moved already. */
  markStored(tenant: string, batchId: string): Promise<boolean>;
  /** The transfers of the batch, by paymentId, in the order asked; a missing one is undefined. */
  transfers(tenant: string, paymentIds: readonly string[]): Promise<(CreditTransferRecord | undefined)[]>;
}

/** A final transfer as its batch counts it. */
export interface FinalTransfer {
  tenant: string;
  batchId: string;
  /** Its position in the batch: what makes counting it idempotent. */
  position: number;
  status: string;
  statusReasonCode?: string;
}

/** The batch outcome's writes: each a single conditional update of the batch item. */
export interface BatchOutcomeStore {
  get(tenant: string, batchId: string): Promise<BatchRecord | undefined>;
  /** Counts the transfer toward its batch once: the batch after counting, or undefined when it was counted before. */
  countFinal(transfer: FinalTransfer): Promise<BatchRecord | undefined>;
  /** Marks the batch completed at `at` when nothing is open and it is not yet: the batch so marked, or undefined. */
  complete(tenant: string, batchId: string, at: string): Promise<BatchRecord | undefined>;
  markCompletionPublished(tenant: string, batchId: string): Promise<void>;
}

/** What the bus carries of a completed batch: identifiers only; its reader takes the rest from the table. */
export interface BatchCompletedEvent {
  eventId: string;
  tenant: string;
  batchId: string;
  completedAt: string;
}

export interface BatchEventPublisher {
  publishBatchCompleted(event: BatchCompletedEvent): Promise<void>;
}

/** Which batch: what the asynchronous start of its lifecycles carries, identifiers only. */
export interface BatchReference {
  tenant: string;
  batchId: string;
}

/**
 * Starts the lifecycles of a stored batch's transfers off the request's path: the request asks
 * once and answers, and the starts run at the rate the workflow service allows. A failure to ask
 * leaves the transfers due in the recovery index, for the reconciler (the adapter logs it).
 */
export interface BatchLifecycleStarter {
  start(batch: BatchReference): Promise<void>;
}
