import * as z from 'zod/mini';
import {
  ApprovalConflictError,
  ForbiddenError,
  IdempotencyKeyReusedError,
  PaymentNotFoundError,
} from '../commons/errors.ts';
import type { Clock } from '../commons/ports.ts';
import { described } from '../commons/text.ts';
import { parseOrThrow } from '../commons/validation.ts';
import {
  type CreditTransfer,
  descriptionSchema,
  paymentIdSchema,
} from '../credit-transfers/credit-transfer.ts';
import { toCreditTransfer } from '../credit-transfers/credit-transfer-view.ts';
import { STALL_SECONDS, STATUS_REASONS, secondsAfter } from '../credit-transfers/lifecycle.ts';
import type { CreditTransferRecord, LifecycleStore, WorkflowStarter } from '../credit-transfers/ports.ts';
import { startLifecycle } from '../credit-transfers/start-lifecycle.ts';
import {
  type ApprovalDecision,
  isApproved,
  isExpired,
  isRejected,
  type PendingApproval,
} from './approval.ts';
import { countApproved } from './count-limits.ts';
import type { ApprovalStore, LimitCounters } from './ports.ts';

export const approvalDecisionRequestSchema = z.strictObject({
  decision: described(
    z.enum(['approve', 'reject']),
    'Approve the transfer, or reject it (it ends Rejected).',
  ),
  reason: described(z.optional(descriptionSchema), 'Why; kept with the decision.'),
});

export interface ApprovalDependencies {
  store: LifecycleStore;
  approvals: ApprovalStore;
  clock: Clock;
  workflow?: WorkflowStarter;
  /** The limit counters: a transfer held by a limit's breach counts once approved. */
  counters?: LimitCounters;
}

export interface DecisionCommand {
  tenant: string;
  clientId: string;
  paymentId: string | undefined;
  body: unknown;
  idempotencyKey?: string;
  tokenId?: string;
  dpopThumbprint?: string;
}

export interface DecisionResult {
  creditTransfer: CreditTransfer;
  replayed: boolean;
}

/**
 * Moves a Pending transfer on once its approval is settled: approved, it becomes Received and its
 * lifecycle starts exactly as an initiation's would (the execution name is the initiation's, so
 * a second start is a no-op); rejected, expired or cancelled, it ends. Conditional on Pending, so
 * of two callers (two approvers, an approver and the reconciler) one moves it. The record as it
 * stands afterwards; unchanged when there is nothing to settle yet.
 */
export const settlePending = async (
  {
    store,
    clock,
    workflow,
    counters,
  }: Pick<ApprovalDependencies, 'store' | 'clock' | 'workflow' | 'counters'>,
  record: CreditTransferRecord,
): Promise<CreditTransferRecord> => {
  const { approval } = record;
  if (record.status !== 'Pending' || approval === undefined) return record;
  // Still being counted against its limits: whoever counts it (the initiation, else the
  // reconciler) settles it afterwards.
  if (record.limits?.state === 'reserving') return record;
  const now = clock.now();
  const date = now.toISOString();
  const ending = (statusReason: string, actor: string) =>
    store.transition(record.tenant, record.paymentId, {
      from: 'Pending',
      change: { status: record.cancellation ? 'Cancelled' : 'Rejected', statusReason, date, actor },
      // The workflow publishes the change (a recovery execution, should this start be lost).
      nextCheckAt: secondsAfter(now, STALL_SECONDS),
    });
  let settled: CreditTransferRecord | undefined;
  if (record.cancellation !== undefined) {
    settled = await ending(STATUS_REASONS.requestedByCustomer, record.cancellation.clientId);
  } else if (isRejected(approval)) {
    const rejection = approval.approvals.find((entry) => entry.decision === 'reject');
    settled = await ending(STATUS_REASONS.orderCancelled, rejection?.clientId ?? 'workflow');
  } else if (isApproved(approval)) {
    if (record.limits?.state === 'onApproval') {
      if (counters === undefined)
        throw new Error('A transfer held by a limit is approved and no limit counters were given');
      settled = await countApproved({ store, counters, clock }, record, approvedAt(approval));
    } else {
      settled = await store.transition(record.tenant, record.paymentId, {
        from: 'Pending',
        change: { status: 'Received', date, actor: 'workflow' },
        nextCheckAt: secondsAfter(now, STALL_SECONDS),
      });
    }
    if (settled)
      await startLifecycle(workflow, {
        tenant: record.tenant,
        paymentId: record.paymentId,
        trigger: 'initiation',
      });
    return settled ?? (await store.get(record.tenant, record.paymentId)) ?? record;
  } else if (isExpired(approval, now)) {
    settled = await ending(STATUS_REASONS.waitingTimeExpired, 'workflow');
  } else {
    return record;
  }
  if (settled) {
    await startLifecycle(workflow, {
      tenant: record.tenant,
      paymentId: record.paymentId,
      trigger: 'cancellation',
    });
    return settled;
  }
  return (await store.get(record.tenant, record.paymentId)) ?? record;
};

/** When the approval that completed the count was given: a repeat of the settlement finds the same time. */
const approvedAt = (approval: PendingApproval): Date => {
  const approvals = approval.approvals.filter((entry) => entry.decision === 'approve');
  const completing = approvals[approval.approvalsRequired - 1] ?? approvals[approvals.length - 1];
  return new Date(completing?.at ?? approval.expiresAt);
};

const sameDecision = (kept: ApprovalDecision, decision: string, reason: string | undefined) =>
  kept.decision === decision && kept.reason === reason;

/**
 * Records one client's decision on a pending transfer. The initiator never decides; each other
 * client of the tenant decides once. Enough approvals start the lifecycle, one rejection ends it.
 */
export const decideApproval = async (
  deps: ApprovalDependencies,
  command: DecisionCommand,
): Promise<DecisionResult> => {
  const { tenant, clientId, idempotencyKey } = command;
  const paymentId = parseOrThrow(paymentIdSchema, command.paymentId, 'The paymentId is not valid', [
    'paymentId',
  ]);
  const { decision, reason } = parseOrThrow(
    approvalDecisionRequestSchema,
    command.body,
    'The approval decision is not valid',
  );
  for (let race = 0; race < 5; race++) {
    const record = await deps.store.get(tenant, paymentId);
    // Another tenant's payment is answered exactly like an unknown one.
    if (record === undefined) throw new PaymentNotFoundError(paymentId);
    const approval = record.approval;
    if (approval === undefined) {
      throw new ApprovalConflictError(
        'payment_not_pending',
        'The credit transfer does not wait for approval',
      );
    }
    const earlier = approval.approvals.find((entry) => entry.clientId === clientId);
    if (earlier !== undefined) {
      if (idempotencyKey !== undefined && earlier.idempotencyKey === idempotencyKey) {
        if (!sameDecision(earlier, decision, reason)) throw new IdempotencyKeyReusedError();
        return { creditTransfer: toCreditTransfer(record), replayed: true };
      }
      throw new ApprovalConflictError(
        'approval_already_decided',
        'This client has already decided on the credit transfer; each client decides once',
      );
    }
    if (record.clientId === clientId) {
      throw new ForbiddenError('The client that initiated the credit transfer cannot approve or reject it');
    }
    const now = deps.clock.now();
    const decided = isApproved(approval) || isRejected(approval);
    if (record.status !== 'Pending' || decided || isExpired(approval, now)) {
      // Decided or past its expiry, it is moved on now, if no one has done it yet.
      if (record.status === 'Pending') await settlePending(deps, record);
      throw new ApprovalConflictError(
        'payment_not_pending',
        record.status === 'Pending'
          ? decided
            ? 'The credit transfer has been decided already'
            : 'The approval of the credit transfer has expired'
          : `The credit transfer is ${record.status} and no longer waits for approval`,
      );
    }
    const entry: ApprovalDecision = {
      clientId,
      decision,
      ...(reason !== undefined && { reason }),
      at: now.toISOString(),
      ...(command.tokenId !== undefined && { tokenId: command.tokenId }),
      ...(command.dpopThumbprint !== undefined && { dpopThumbprint: command.dpopThumbprint }),
      ...(idempotencyKey !== undefined && { idempotencyKey }),
    };
    const after = { ...approval, approvals: [...approval.approvals, entry] };
    const settles = isRejected(after) || isApproved(after);
    const recorded = await deps.approvals.recordDecision(
      tenant,
      paymentId,
      entry,
      approval.approvals.length,
      // Should this process stop before it moves the transfer on, the reconciler does it soon.
      settles ? secondsAfter(now, STALL_SECONDS) : undefined,
    );
    if (recorded === undefined) continue; // Another decision landed first: read again.
    const settled = settles ? await settlePending(deps, recorded) : recorded;
    return { creditTransfer: toCreditTransfer(settled), replayed: false };
  }
  throw new Error(`The approval of ${paymentId} kept racing with other decisions`);
};

/** Every decision on a transfer, with the token and key each came with; [] for one never held. */
export const listApprovalDecisions = async (
  { store }: Pick<ApprovalDependencies, 'store'>,
  tenant: string,
  rawPaymentId: string | undefined,
) => {
  const paymentId = parseOrThrow(paymentIdSchema, rawPaymentId, 'The paymentId is not valid', ['paymentId']);
  const record = await store.get(tenant, paymentId);
  if (record === undefined) throw new PaymentNotFoundError(paymentId);
  return (record.approval?.approvals ?? []).map(({ idempotencyKey: _key, ...decision }) => decision);
};
