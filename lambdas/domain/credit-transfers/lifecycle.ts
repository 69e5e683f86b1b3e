import { createHash } from 'node:crypto';
import type { KnownStatusReason } from '../iso20022/status-codes.ts';
import { type CreditTransferStatus, FINAL_STATUSES } from './credit-transfer-status.ts';
import type { CreditTransferRecord, StatusChange, StatusChangedEvent } from './ports.ts';

/**
 * The status lifecycle of a credit transfer: Received -> AcceptedTechnicalValidation ->
 * AcceptedCustomerProfile -> AcceptedSettlementInProcess -> AcceptedSettlementCompleted,
 * Rejected from any non-final status, Cancelled while a cancellation can still win.
 */
export const PROGRESSION: readonly CreditTransferStatus[] = [
  'Received',
  'AcceptedTechnicalValidation',
  'AcceptedCustomerProfile',
  'AcceptedSettlementInProcess',
  'AcceptedSettlementCompleted',
];

/** ISO 20022 status reasons (long names) the service sets; each has its code in the ISO table. */
export const STATUS_REASONS = {
  requestedByCustomer: 'RequestedByCustomer',
  blockedAccount: 'BlockedAccount',
  closedAccountNumber: 'ClosedAccountNumber',
  insufficientFunds: 'InsufficientFunds',
  transactionForbidden: 'TransactionForbidden',
  regulatoryReason: 'RegulatoryReason',
  invalidFileFormat: 'InvalidFileFormat',
  zeroAmount: 'ZeroAmount',
  /** An operator rejected a parked transfer (ISO 20022 MS03, reason not specified, agent generated). */
  notSpecifiedReasonAgentGenerated: 'NotSpecifiedReasonAgentGenerated',
  /** An approver rejected a pending transfer (ISO 20022 DS02, an authorised user cancelled the order). */
  orderCancelled: 'OrderCancelled',
  /** A pending transfer's approvals did not come in time (DS24). */
  waitingTimeExpired: 'WaitingTimeExpired',
  /** A limit of the tenant's payment controls refused the transfer (AM14). */
  amountExceedsAgreedLimit: 'AmountExceedsAgreedLimit',
} as const satisfies Record<string, KnownStatusReason>;

/** Who caused a status change when no client did. */
export const ACTORS = { workflow: 'workflow', rail: 'rail' } as const;

export const isFinal = (status: CreditTransferStatus): boolean => FINAL_STATUSES.has(status);

/**
 * Before submission to clearing a cancellation always wins; afterwards only if clearing recalls it.
 * Submission starts when the workflow claims it (`submittedAt`), before the status moves on: from
 * then on clearing may have the payment.
 */
export const isBeforeSettlement = (transfer: {
  status: CreditTransferStatus;
  submittedAt?: string;
}): boolean =>
  transfer.submittedAt === undefined &&
  (transfer.status === 'Received' ||
    transfer.status === 'AcceptedTechnicalValidation' ||
    transfer.status === 'AcceptedCustomerProfile');

/** True when `to` may follow `from`: one step forward, or Rejected/Cancelled from a non-final status. */
export const canTransition = (from: CreditTransferStatus, to: CreditTransferStatus): boolean => {
  if (isFinal(from)) return false;
  // Approved, a pending transfer starts the lifecycle at its first status.
  if (from === 'Pending') return to === 'Received' || to === 'Rejected' || to === 'Cancelled';
  // A limit's breach that asks for approval holds a transfer before its lifecycle starts.
  if (to === 'Pending') return from === 'Received';
  if (to === 'Rejected') return true;
  if (to === 'Cancelled') return true;
  return PROGRESSION.indexOf(to) === PROGRESSION.indexOf(from) + 1;
};

/** A status change the lifecycle does not allow: a defect in the caller, refused before any write. */
export class IllegalStatusTransitionError extends Error {
  constructor(from: CreditTransferStatus, to: CreditTransferStatus) {
    super(`A credit transfer cannot move from ${from} to ${to}`);
    this.name = 'IllegalStatusTransitionError';
  }
}

/**
 * If nothing moves a non-final transfer for this long, the reconciler drives it on. Far longer
 * than any step takes, so a healthy workflow is never doubled.
 */
export const STALL_SECONDS = 120;

/** The earlier of two ISO 8601 UTC timestamps, the second optional. */
export const earliest = (date: string, other: string | undefined): string =>
  other !== undefined && other < date ? other : date;

export const secondsAfter = (date: Date, seconds: number): Date => new Date(date.getTime() + seconds * 1000);

/** Why a workflow execution is started. */
export type LifecycleTrigger = 'initiation' | 'cancellation' | 'recovery';

export interface LifecycleStart {
  tenant: string;
  paymentId: string;
  trigger: LifecycleTrigger;
  /** Recovery attempt number; names each recovery execution apart. */
  attempt?: number;
}

const EXECUTION_NAME_CHARACTERS = /[^A-Za-z0-9_-]/g;

/**
 * Step Functions execution name (at most 80 of [A-Za-z0-9-_]): the paymentId, readable in the
 * console, with a hash of tenant and paymentId (paymentIds are only unique within a tenant).
 * One name per trigger, so a replayed initiation or cancellation cannot start a second execution,
 * while each recovery attempt gets a name of its own.
 */
export const lifecycleExecutionName = (start: LifecycleStart): string => {
  const digest = createHash('sha256')
    .update(`${start.tenant}\u0000${start.paymentId}`)
    .digest('hex')
    .slice(0, 12);
  const base = `${start.paymentId.replace(EXECUTION_NAME_CHARACTERS, '_').slice(0, 40)}-${digest}`;
  if (start.trigger === 'initiation') return base;
  if (start.trigger === 'cancellation') return `${base}-cancel`;
  return `${base}-r${start.attempt ?? 0}`;
};

/** The id of the event that publishes history entry `sequence`: the same on every retry, so consumers dedupe. */
export const statusEventId = (tenant: string, paymentId: string, sequence: number): string => {
  const hex = createHash('sha256').update(`${tenant}\u0000${paymentId}\u0000${sequence}`).digest('hex');
  // UUID layout (RFC 9562 version 8), like paymentIds.
  const variant = ((Number.parseInt(hex.slice(16, 17), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
};

/** The event that publishes history entry `sequence` of a transfer: what the bus carries, and all it may carry. */
export const toStatusChangedEvent = (
  record: Pick<CreditTransferRecord, 'tenant' | 'paymentId' | 'history'>,
  sequence: number,
  entry: StatusChange,
): StatusChangedEvent => {
  const previous = record.history[sequence - 1];
  return {
    eventId: statusEventId(record.tenant, record.paymentId, sequence),
    tenant: record.tenant,
    paymentId: record.paymentId,
    sequence,
    status: entry.status,
    ...(previous !== undefined && { previousStatus: previous.status }),
    ...(entry.statusReason !== undefined && { statusReason: entry.statusReason }),
    ...(entry.statusReasonCode !== undefined && { statusReasonCode: entry.statusReasonCode }),
    date: entry.date,
    actor: entry.actor,
  };
};

export const STATUS_CHANGED_EVENT = 'CreditTransferStatusChanged';
