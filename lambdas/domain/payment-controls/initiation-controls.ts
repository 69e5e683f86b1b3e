import type { PendingApproval } from './approval.ts';
import { approvalFor, asksForNewCreditor, type InitiationFacts } from './approval-rules.ts';
import type { CurrentControlsReader, PaymentHistory } from './ports.ts';

/** What the initiation asks of the tenant's payment controls: the approval a new transfer waits for, if any. */
export type ApprovalPolicy = (
  tenant: string,
  facts: Omit<InitiationFacts, 'newCreditor'>,
  now: Date,
) => Promise<PendingApproval | undefined>;

/**
 * The controls current when the transfer arrives decide (a later change leaves it as it is); the
 * payment history is read only when a rule asks whether the creditor is new.
 */
export const approvalPolicy =
  (controls: CurrentControlsReader, history: PaymentHistory): ApprovalPolicy =>
  async (tenant, facts, now) => {
    const current = await controls.current(tenant);
    if (current === undefined || current.controls.approvalRules.length === 0) return undefined;
    const { transfer } = facts;
    const newCreditor =
      asksForNewCreditor(current.controls) && transfer.creditorAccountId !== undefined
        ? !(await history.hasPaid(tenant, transfer.debtorAccountId, transfer.creditorAccountId))
        : undefined;
    return approvalFor(
      current.controls,
      { ...facts, ...(newCreditor !== undefined && { newCreditor }) },
      now,
    );
  };
