import type { CreditTransferRecord } from '../credit-transfers/ports.ts';
import type { ApprovalDecision } from './approval.ts';
import type { CounterBound, LimitCounterKey, LimitUsage } from './limits.ts';
import type { PaymentControls } from './payment-controls.ts';

/** One stored version of a tenant's controls: versions count from 1, each kept for good. */
export interface PaymentControlsVersion {
  version: number;
  controls: PaymentControls;
  /** The client that stored it. */
  clientId: string;
  createdAt: string;
}

export interface PaymentControlsStore {
  /** The newest version, or undefined before the first. */
  current(tenant: string): Promise<PaymentControlsVersion | undefined>;
  /**
   * Stores `version` if no version of that number exists yet (a conditional write): false when
   * another change took the number first.
   */
  add(tenant: string, version: PaymentControlsVersion): Promise<boolean>;
  /** Versions newest first, those below `before` when given, at most `limit`. */
  list(tenant: string, options: { before?: number; limit: number }): Promise<PaymentControlsVersion[]>;
}

/** The decisions on pending transfers, each kept on the transfer it decides. */
export interface ApprovalStore {
  /**
   * Appends the decision while the transfer is Pending and holds exactly `seen` decisions (so of two
   * racing decisions one is refused and reads again); `nextCheckAt` moves the recovery check, for a
   * decision that settles the transfer. The updated record, or undefined when refused.
   */
  recordDecision(
    tenant: string,
    paymentId: string,
    decision: ApprovalDecision,
    seen: number,
    nextCheckAt?: Date,
  ): Promise<CreditTransferRecord | undefined>;
}

/** The tenant's current controls, as the initiation reads them. */
export interface CurrentControlsReader {
  current(tenant: string): Promise<PaymentControlsVersion | undefined>;
}

/** Whether a debtor account has paid a creditor account before (rules with `newCreditorOnly`). */
export interface PaymentHistory {
  hasPaid(tenant: string, debtorAccountId: string, creditorAccountId: string): Promise<boolean>;
}

/**
 * The limit counters: per account, currency and period, the amount and number of transfers
 * counted. Each write also marks the transfer it was for, until the transfer's own record notes
 * it (`acknowledge`): a repeat after a crash in between finds the mark, and counts nothing twice
 * or gives nothing back twice. The marks stay few, so the items stay small.
 */
export interface LimitCounters {
  /**
   * Counts the transfer unless that breaks `bound` (one conditional write; `unbounded` for a
   * transfer a client approved past its limit). Counted already (marked) is counted. Refused,
   * the usage it found.
   */
  reserve(
    key: LimitCounterKey,
    paymentId: string,
    amountUnits: bigint,
    bound: CounterBound | 'unbounded',
  ): Promise<{ counted: true } | { counted: false; usage: LimitUsage }>;
  /** Gives back what the transfer counted (it ended Rejected or Cancelled); given back already (marked) changes nothing. */
  release(key: LimitCounterKey, paymentId: string, amountUnits: bigint): Promise<void>;
  /** Removes the transfer's marks once its record notes what was done. */
  acknowledge(key: LimitCounterKey, paymentId: string): Promise<void>;
  usage(key: LimitCounterKey): Promise<LimitUsage>;
}
