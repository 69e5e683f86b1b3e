import { createHash } from 'node:crypto';
import type { Clock } from '../commons/ports.ts';
import { isFinal, STATUS_REASONS } from './lifecycle.ts';
import type { LifecycleSettings } from './lifecycle-settings.ts';
import type {
  CreditTransferRecord,
  LifecycleStore,
  OperationsEventPublisher,
  ParkedMark,
  ParkedTransfers,
  TransferParkedEvent,
} from './ports.ts';

/**
 * Parking: a transfer that fails every attempt is not started again forever (each start paging
 * someone). After `maxAttempts` executions without moving on it is parked: its status stays as it
 * is, it leaves the reconciler's queue for the parked list, and one event says so. An operator
 * then retries it (`unparkCreditTransfer`) or rejects it (`rejectParkedCreditTransfer`).
 */

/** The `detail-type` of the event that tells operators a transfer was parked. */
export const TRANSFER_PARKED_EVENT = 'CreditTransferParked';

/** The parking reason when no step failure was caught (executions that timed out or were lost). */
export const NO_PROGRESS = 'NoProgress';

/** The reason a rejection by an operator carries (ISO 20022 MS03). */
export const OPERATOR_REJECTION_REASON = STATUS_REASONS.notSpecifiedReasonAgentGenerated;

export interface ParkingDependencies {
  store: LifecycleStore;
  events: OperationsEventPublisher;
  clock: Clock;
  settings: Pick<LifecycleSettings, 'maxAttempts'>;
}

/** Executions the transfer has had since it last moved on, the first one included. */
export const executionsWithoutProgress = (record: CreditTransferRecord): number =>
  (record.stalledAttempts ?? 0) + 1;

const needsWork = (record: CreditTransferRecord): boolean =>
  !isFinal(record.status) || (record.publishedCount ?? 0) < record.history.length;

/** An error name as a reason: names only, never a message (messages may carry data). */
const reasonOf = (errorName: string | undefined): string =>
  errorName !== undefined && /^[A-Za-z0-9_.]{1,100}$/.test(errorName) ? errorName : 'StepFailed';

const parkedEvent = (record: CreditTransferRecord, parked: ParkedMark): TransferParkedEvent => ({
  // The same id for the same parking, so a retried publish is deduplicated by id.
  eventId: createHash('sha256')
    .update(`${record.tenant}\u0000${record.paymentId}\u0000${parked.at}`)
    .digest('hex')
    .slice(0, 32),
  tenant: record.tenant,
  paymentId: record.paymentId,
  status: record.status,
  parked,
});

/** Parks the transfer as it was read; true when this call parked it (and published its event). */
export const parkCreditTransfer = async (
  deps: ParkingDependencies,
  record: CreditTransferRecord,
  reason: string,
): Promise<boolean> => {
  const mark: ParkedMark = {
    at: deps.clock.now().toISOString(),
    attempts: executionsWithoutProgress(record),
    reason,
  };
  if (!(await deps.store.park(record.tenant, record.paymentId, record.status, mark))) return false;
  await deps.events.publishParked(parkedEvent(record, mark));
  return true;
};

export type ParkOutcome = { parked: true } | { parked: false; attempts: number };

/**
 * The workflow's catch-all, after a step failed for good: parks the transfer once it has had its
 * last attempt; before that the reconciler starts it again. A transfer parked already (a retry of
 * this step) has its event published again, under the same id.
 */
export const parkIfExhausted = async (
  deps: ParkingDependencies,
  failure: { tenant: string; paymentId: string; error?: string },
): Promise<ParkOutcome> => {
  const record = await deps.store.get(failure.tenant, failure.paymentId);
  if (record === undefined || !needsWork(record)) return { parked: false, attempts: 0 };
  if (record.parked !== undefined) {
    await deps.events.publishParked(parkedEvent(record, record.parked));
    return { parked: true };
  }
  const attempts = executionsWithoutProgress(record);
  if (attempts < deps.settings.maxAttempts) return { parked: false, attempts };
  return (await parkCreditTransfer(deps, record, reasonOf(failure.error)))
    ? { parked: true }
    : { parked: false, attempts };
};

/** The operator named a transfer that is not parked (or not there). */
export class TransferNotParkedError extends Error {
  constructor(tenant: string, paymentId: string) {
    super(`Credit transfer ${paymentId} of tenant ${tenant} is not parked`);
    this.name = 'TransferNotParkedError';
  }
}

/** A parked transfer submitted to clearing may be paid there: rejecting it needs clearing's word. */
export class SubmittedToClearingError extends Error {
  constructor(paymentId: string) {
    super(
      `Credit transfer ${paymentId} was submitted to clearing, which may settle it: confirm with the bank that clearing does not have it (or that it was recalled), then reject it with --not-in-clearing`,
    );
    this.name = 'SubmittedToClearingError';
  }
}

/** The transfer moved while the operator decided (settled, cancelled, retried): nothing written. */
export class ParkedTransferMovedError extends Error {
  constructor(paymentId: string) {
    super(`Credit transfer ${paymentId} changed meanwhile; nothing was written: look at it again`);
    this.name = 'ParkedTransferMovedError';
  }
}

/** Back to the reconciler, due now, with a fresh count of attempts. */
export const unparkCreditTransfer = async (
  deps: { parked: ParkedTransfers; clock: Clock },
  tenant: string,
  paymentId: string,
): Promise<void> => {
  if (!(await deps.parked.unpark(tenant, paymentId, deps.clock.now())))
    throw new TransferNotParkedError(tenant, paymentId);
};

/** The most an operator's bulk retry takes in one run: more are left parked, and the count says so. */
export const MAX_BULK_RETRY = 10_000;

export interface BulkRetryReport {
  /** Back in recovery: the reconciler starts each on its next run. */
  retried: number;
  /** Parked before `since`: left parked. */
  older: number;
  /** Moved meanwhile (retried or rejected by someone else): left as they are. */
  moved: number;
}

/**
 * After an outage that parked many transfers: every parked transfer (parked at or after `since`,
 * when given) gets a new round of attempts, each by the same conditional write as a single retry.
 */
export const unparkCreditTransfers = async (
  deps: { parked: ParkedTransfers; clock: Clock },
  since?: Date,
): Promise<BulkRetryReport> => {
  const report: BulkRetryReport = { retried: 0, older: 0, moved: 0 };
  for (const record of await deps.parked.parked(MAX_BULK_RETRY)) {
    const parkedAt = Date.parse(record.parked?.at ?? '');
    if (since !== undefined && !(parkedAt >= since.getTime())) {
      report.older += 1;
    } else if (await deps.parked.unpark(record.tenant, record.paymentId, deps.clock.now())) {
      report.retried += 1;
    } else {
      report.moved += 1;
    }
  }
  return report;
};

export interface ParkedRejection {
  tenant: string;
  paymentId: string;
  /** Who rejects it: recorded in the history. */
  actor: string;
  /** The operator confirmed that clearing does not have the payment (needed once it was submitted). */
  notInClearing?: boolean;
}

/**
 * Rejected with OPERATOR_REJECTION_REASON, by one conditional write naming the status the transfer
 * is parked in (and, unless the operator confirmed otherwise, that it was never submitted to
 * clearing): a settlement or any other move meanwhile makes it fail, never both. The reconciler
 * publishes the change at once (the recovery entry is due now).
 */
export const rejectParkedCreditTransfer = async (
  deps: { store: LifecycleStore; clock: Clock },
  rejection: ParkedRejection,
): Promise<CreditTransferRecord> => {
  const record = await deps.store.get(rejection.tenant, rejection.paymentId);
  if (record?.parked === undefined || isFinal(record.status))
    throw new TransferNotParkedError(rejection.tenant, rejection.paymentId);
  if (record.submittedAt !== undefined && rejection.notInClearing !== true)
    throw new SubmittedToClearingError(rejection.paymentId);
  const now = deps.clock.now();
  const updated = await deps.store.transition(rejection.tenant, rejection.paymentId, {
    from: record.status,
    change: {
      status: 'Rejected',
      statusReason: OPERATOR_REJECTION_REASON,
      date: now.toISOString(),
      actor: rejection.actor,
    },
    whileParked: true,
    ...(rejection.notInClearing !== true && { submission: 'unclaimed' as const }),
    nextCheckAt: now,
  });
  if (updated === undefined) throw new ParkedTransferMovedError(rejection.paymentId);
  return updated;
};
