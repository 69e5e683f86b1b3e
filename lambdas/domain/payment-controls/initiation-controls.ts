import type { PendingApproval } from './approval.ts';
import { approvalFor, asksForNewCreditor, type InitiationFacts } from './approval-rules.ts';
import { type LimitHold, limitHoldFor } from './limits.ts';
import { approvalExpiryMs, type PaymentControls } from './payment-controls.ts';
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
    if (current === undefined) return undefined;
    return approvalUnder(current.controls, history, tenant, facts, now);
  };

const approvalUnder = async (
  controls: PaymentControls,
  history: PaymentHistory,
  tenant: string,
  facts: Omit<InitiationFacts, 'newCreditor'>,
  now: Date,
): Promise<PendingApproval | undefined> => {
  if (controls.approvalRules.length === 0) return undefined;
  const { transfer } = facts;
  const newCreditor =
    asksForNewCreditor(controls) && transfer.creditorAccountId !== undefined
      ? !(await history.hasPaid(tenant, transfer.debtorAccountId, transfer.creditorAccountId))
      : undefined;
  return approvalFor(controls, { ...facts, ...(newCreditor !== undefined && { newCreditor }) }, now);
};

/** What the tenant's payment controls ask of a new transfer: an approval to wait for, limits to count in. */
export interface InitiationControls {
  approval?: PendingApproval;
  limits?: LimitHold;
}

export type ControlsPolicy = (
  tenant: string,
  facts: Omit<InitiationFacts, 'newCreditor'>,
  now: Date,
) => Promise<InitiationControls>;

/** The approval rules and the limits, from one read of the current controls. */
export const controlsPolicy =
  (controls: CurrentControlsReader, history: PaymentHistory): ControlsPolicy =>
  async (tenant, facts, now) => {
    const current = await controls.current(tenant);
    if (current === undefined) return {};
    const approval = await approvalUnder(current.controls, history, tenant, facts, now);
    const limits = limitHoldFor(
      current.controls,
      facts.transfer,
      now,
      approvalExpiryMs(current.controls) / 1000,
    );
    return { ...(approval !== undefined && { approval }), ...(limits !== undefined && { limits }) };
  };
