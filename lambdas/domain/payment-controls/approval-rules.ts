import { compareDecimals } from '../commons/decimal.ts';
import type { CreditTransferRequest } from '../credit-transfers/credit-transfer.ts';
import type { PendingApproval } from './approval.ts';
import { type ApprovalRule, approvalExpiryMs, type PaymentControls } from './payment-controls.ts';

/**
 * Which approval rule holds a new transfer. Apart from approval.ts, which every transfer read
 * imports: only the initiation carries the controls' schema and its currency data.
 */

/** What a rule may ask about the transfer beyond its own fields. */
export interface InitiationFacts {
  transfer: CreditTransferRequest;
  clientId: string;
  /** Whether the debtor account has never paid the transfer's creditorAccountId (undefined: not asked). */
  newCreditor?: boolean;
}

/** Whether every condition the rule names holds for the transfer. */
export const ruleMatches = (
  rule: ApprovalRule,
  { transfer, clientId, newCreditor }: InitiationFacts,
): boolean =>
  // A transfer that names no currency may be in the rule's: it is held rather than let through.
  (rule.currency === undefined || transfer.currency === undefined || transfer.currency === rule.currency) &&
  (rule.minimumAmount === undefined || compareDecimals(transfer.amount, rule.minimumAmount) >= 0) &&
  (rule.paymentMethod === undefined || transfer.paymentMethod === rule.paymentMethod) &&
  (rule.debtorAccountId === undefined || transfer.debtorAccountId === rule.debtorAccountId) &&
  (rule.newCreditorOnly !== true || (transfer.creditorAccountId !== undefined && newCreditor === true)) &&
  (rule.initiatingClientId === undefined || clientId === rule.initiatingClientId);

/** Whether any rule asks if the creditor is new (the one fact that costs a read). */
export const asksForNewCreditor = (controls: PaymentControls): boolean =>
  controls.approvalRules.some((rule) => rule.newCreditorOnly === true);

/** The approval a new transfer waits for: the matching rule needing the most approvals (the first of equals). */
export const approvalFor = (
  controls: PaymentControls,
  facts: InitiationFacts,
  now: Date,
): PendingApproval | undefined => {
  let chosen: ApprovalRule | undefined;
  for (const rule of controls.approvalRules) {
    if (
      ruleMatches(rule, facts) &&
      (chosen === undefined || rule.approvalsRequired > chosen.approvalsRequired)
    )
      chosen = rule;
  }
  if (chosen === undefined) return undefined;
  return {
    rule: chosen.name,
    initiatingClientId: facts.clientId,
    approvalsRequired: chosen.approvalsRequired,
    approvals: [],
    expiresAt: new Date(now.getTime() + approvalExpiryMs(controls)).toISOString(),
  };
};
