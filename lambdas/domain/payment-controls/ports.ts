import type { CreditTransferRecord } from '../credit-transfers/ports.ts';
import type { ApprovalDecision } from './approval.ts';
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
