import type { PendingApproval } from './approval.ts';
import { approvalFor, asksForNewCreditor, type InitiationFacts } from './approval-rules.ts';
import type { CurrentControlsReader, PaymentHistory } from './ports.ts';

/** What the initiation asks of the tenant's payment controls: the approval a new transfer waits for, if any. */
export type ApprovalPolicy = (
  tenant: string,
  facts: Omit<InitiationFacts, 'newCreditor'>,
  now: Date,
) => Promise<PendingApproval | undefined>;

/** The approval one transfer waits for under controls read already. */
export type TransferApproval = (
  facts: Omit<InitiationFacts, 'newCreditor'>,
  now: Date,
) => Promise<PendingApproval | undefined>;

/**
 * The tenant's controls as they are now, read once, to apply to many transfers (a batch's): the
 * payment history is read per transfer only when a rule asks whether the creditor is new.
 */
export type CurrentApprovalRules = (tenant: string) => Promise<TransferApproval>;

const NO_APPROVAL: TransferApproval = async () => undefined;

export const currentApprovalRules =
  (controls: CurrentControlsReader, history: PaymentHistory): CurrentApprovalRules =>
  async (tenant) => {
    const current = await controls.current(tenant);
    if (current === undefined || current.controls.approvalRules.length === 0) return NO_APPROVAL;
    const rules = current.controls;
    const asksHistory = asksForNewCreditor(rules);
    return async (facts, now) => {
      const { transfer } = facts;
      const newCreditor =
        asksHistory && transfer.creditorAccountId !== undefined
          ? !(await history.hasPaid(tenant, transfer.debtorAccountId, transfer.creditorAccountId))
          : undefined;
      return approvalFor(rules, { ...facts, ...(newCreditor !== undefined && { newCreditor }) }, now);
    };
  };

/**
 * The controls current when the transfer arrives decide (a later change leaves it as it is); the
 * payment history is read only when a rule asks whether the creditor is new.
 */
export const approvalPolicy = (controls: CurrentControlsReader, history: PaymentHistory): ApprovalPolicy => {
  const rulesOf = currentApprovalRules(controls, history);
  return async (tenant, facts, now) => (await rulesOf(tenant))(facts, now);
};
