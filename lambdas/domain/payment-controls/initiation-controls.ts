import type { PendingApproval } from './approval.ts';
import { approvalFor, asksForNewCreditor, type InitiationFacts } from './approval-rules.ts';
import { type LimitHold, limitHoldFor } from './limits.ts';
import { approvalExpiryMs, type Limit, type PaymentControls } from './payment-controls.ts';
import type { CurrentControlsReader, PaymentHistory } from './ports.ts';

/** What the tenant's payment controls ask of a new transfer: an approval to wait for, limits to count in. */
export interface InitiationControls {
  approval?: PendingApproval;
  limits?: LimitHold;
}

/** What the controls ask of one transfer, under controls read already. */
export type TransferControls = (
  facts: Omit<InitiationFacts, 'newCreditor'>,
  now: Date,
) => Promise<InitiationControls>;

/**
 * The tenant's controls as they are now, read once, to apply to one transfer or many (a batch's):
 * the payment history is read per transfer only when a rule asks whether the creditor is new.
 */
export type CurrentControls = (tenant: string) => Promise<TransferControls>;

const NOTHING_ASKED: TransferControls = async () => ({});

const controlsUnder = (
  controls: PaymentControls,
  history: PaymentHistory,
  tenant: string,
): TransferControls => {
  const asksHistory = asksForNewCreditor(controls);
  return async (facts, now) => {
    const { transfer } = facts;
    const newCreditor =
      asksHistory && transfer.creditorAccountId !== undefined
        ? !(await history.hasPaid(tenant, transfer.debtorAccountId, transfer.creditorAccountId))
        : undefined;
    const approval =
      controls.approvalRules.length === 0
        ? undefined
        : approvalFor(controls, { ...facts, ...(newCreditor !== undefined && { newCreditor }) }, now);
    const limits = limitHoldFor(controls, transfer, now, approvalExpiryMs(controls) / 1000);
    return { ...(approval !== undefined && { approval }), ...(limits !== undefined && { limits }) };
  };
};

export const currentControls =
  (controls: CurrentControlsReader, history: PaymentHistory): CurrentControls =>
  async (tenant) => {
    const current = await controls.current(tenant);
    return current === undefined ? NOTHING_ASKED : controlsUnder(current.controls, history, tenant);
  };

/** The approval one transfer waits for under controls read already. */
export type TransferApproval = (
  facts: Omit<InitiationFacts, 'newCreditor'>,
  now: Date,
) => Promise<PendingApproval | undefined>;

export type CurrentApprovalRules = (tenant: string) => Promise<TransferApproval>;

/** The approval rules alone, read once per tenant (a batch's transfers). */
export const currentApprovalRules =
  (controls: CurrentControlsReader, history: PaymentHistory): CurrentApprovalRules =>
  async (tenant) => {
    const current = await controls.current(tenant);
    if (current === undefined || current.controls.approvalRules.length === 0) return async () => undefined;
    const under = controlsUnder({ ...current.controls, limits: [] }, history, tenant);
    return async (facts, now) => (await under(facts, now)).approval;
  };

export type ControlsPolicy = (
  tenant: string,
  facts: Omit<InitiationFacts, 'newCreditor'>,
  now: Date,
) => Promise<InitiationControls>;

/** The approval rules and the limits of one transfer, from one read of the current controls. */
export const controlsPolicy = (controls: CurrentControlsReader, history: PaymentHistory): ControlsPolicy => {
  const controlsOf = currentControls(controls, history);
  return async (tenant, facts, now) => (await controlsOf(tenant))(facts, now);
};

/** The limits of the controls as they are now, with the expiry a breach's approval gets (a batch's, kept on the batch). */
export interface LimitRules {
  limits: Limit[];
  approvalExpirySeconds: number;
}

/** The tenant's current limits, read once per batch; undefined when there are none. */
export const currentLimitRules =
  (controls: CurrentControlsReader) =>
  async (tenant: string): Promise<LimitRules | undefined> => {
    const current = (await controls.current(tenant))?.controls;
    if (current === undefined || current.limits.length === 0) return undefined;
    return { limits: current.limits, approvalExpirySeconds: approvalExpiryMs(current) / 1000 };
  };
