import { createHash } from 'node:crypto';
import * as z from 'zod/mini';
import {
  ApprovalConflictError,
  ForbiddenError,
  InvalidRequestError,
  PaymentNotFoundError,
} from '../commons/errors.ts';
import { described } from '../commons/text.ts';
import { parseOrThrow } from '../commons/validation.ts';
import { paymentIdSchema } from '../credit-transfers/credit-transfer.ts';
import { inPool } from '../iso20022/pool.ts';
import type { BatchStore } from '../iso20022/ports.ts';
import { batchPaymentId, heldForApproval, MAX_BATCH_TRANSACTIONS } from '../iso20022/submit-batch.ts';
import {
  type ApprovalDependencies,
  approvalDecisionRequestSchema,
  decideApproval,
} from './decide-approval.ts';

/**
 * Decisions in flight at once: each is a read, a conditional write and, for the last approval
 * needed, a transition and a workflow start; as many as the batch submission's writes and the
 * batch starter's starts, within the table's and Step Functions' rates.
 */
export const BATCH_DECISION_CONCURRENCY = 16;

export interface BatchApprovalDependencies extends ApprovalDependencies {
  batches: Pick<BatchStore, 'get'>;
}

export interface BatchDecisionCommand {
  tenant: string;
  clientId: string;
  batchId: string | undefined;
  body: unknown;
  idempotencyKey?: string;
  tokenId?: string;
  dpopThumbprint?: string;
}

const notDecidedSchema = z.strictObject({
  paymentId: paymentIdSchema,
  reason: described(
    z.enum(['payment_not_pending', 'approval_already_decided', 'forbidden', 'not_found']),
    'The error the single decision route answers for it: `payment_not_pending` (no longer pending: ' +
      'decided, expired, cancelled), `approval_already_decided` (this client decided it before), ' +
      '`forbidden` (this client initiated it), `not_found` (not stored: the batch request was interrupted).',
  ),
  description: described(z.string().check(z.maxLength(256)), 'Why, in words.'),
});

export const batchDecisionResultSchema = z.strictObject({
  batchId: described(z.string().check(z.maxLength(36)), 'The batch.'),
  decision: z.enum(['approve', 'reject']),
  decided: described(
    z.int().check(z.minimum(0), z.maximum(MAX_BATCH_TRANSACTIONS)),
    'Transfers of the batch this call decided (or, repeated with its idempotency key, had decided).',
  ),
  notDecided: described(
    z.array(notDecidedSchema).check(z.maxLength(MAX_BATCH_TRANSACTIONS)),
    'Each transfer the approval rules held that this call could not decide, and why, in batch order.',
  ),
});

/** A held transfer of the batch this call could not decide, and why (the single decision's error). */
export type NotDecided = z.infer<typeof notDecidedSchema>;
export type BatchDecisionResult = z.infer<typeof batchDecisionResultSchema>;

/**
 * The idempotency key of one transfer's decision within a batch decision: derived from the batch
 * call's key, so a repeat of the call repeats each decision, and never equal to a key a client
 * sends to the single decision route.
 */
export const transferDecisionKey = (batchId: string, key: string, paymentId: string): string =>
  `batch-${createHash('sha256').update(`${batchId}\u0000${key}\u0000${paymentId}`).digest('hex').slice(0, 40)}`;

/** Why one transfer was not decided, from the error its single decision gave; undefined: not a refusal. */
const refusalOf = (error: unknown): Omit<NotDecided, 'paymentId'> | undefined => {
  if (error instanceof ApprovalConflictError) return { reason: error.code, description: error.message };
  if (error instanceof ForbiddenError) return { reason: 'forbidden', description: error.message };
  if (error instanceof PaymentNotFoundError)
    return {
      reason: 'not_found',
      description: 'The credit transfer is not stored yet: the batch request was interrupted; send it again',
    };
  return undefined;
};

/**
 * One client's decision on every transfer of a batch that its approval rules held: each decided
 * exactly as the single decision route decides it (decideApproval), a few at a time. The client
 * that submitted the batch is refused whole; a transfer that cannot be decided (no longer pending,
 * decided by this client already, expired) is listed with why, and the others are decided.
 */
export const decideBatchApproval = async (
  deps: BatchApprovalDependencies,
  command: BatchDecisionCommand,
): Promise<BatchDecisionResult> => {
  const { tenant, clientId, idempotencyKey } = command;
  const batchId = command.batchId;
  if (batchId === undefined || !/^[0-9a-f-]{36}$/.test(batchId))
    throw new InvalidRequestError('The batchId is not valid', [
      { name: 'batchId', reason: 'must be a UUID' },
    ]);
  const { decision, reason } = parseOrThrow(
    approvalDecisionRequestSchema,
    command.body,
    'The approval decision is not valid',
  );
  const batch = await deps.batches.get(tenant, batchId);
  // Another tenant's batch is answered exactly as an unknown one.
  if (batch === undefined) throw new PaymentNotFoundError(batchId);
  if (batch.clientId === clientId)
    throw new ForbiddenError(
      'The client that submitted the batch cannot approve or reject its credit transfers',
    );

  const positions = [...heldForApproval(batch).keys()].sort((a, b) => a - b);
  const outcomes: (NotDecided | 'decided')[] = [];
  await inPool(positions, BATCH_DECISION_CONCURRENCY, async (position, index) => {
    const paymentId = batchPaymentId(tenant, batchId, position);
    try {
      await decideApproval(deps, {
        tenant,
        clientId,
        paymentId,
        body: { decision, ...(reason !== undefined && { reason }) },
        ...(idempotencyKey !== undefined && {
          idempotencyKey: transferDecisionKey(batchId, idempotencyKey, paymentId),
        }),
        ...(command.tokenId !== undefined && { tokenId: command.tokenId }),
        ...(command.dpopThumbprint !== undefined && { dpopThumbprint: command.dpopThumbprint }),
      });
      outcomes[index] = 'decided';
    } catch (error) {
      const refusal = refusalOf(error);
      if (refusal === undefined) throw error;
      outcomes[index] = { paymentId, ...refusal };
    }
  });
  const notDecided = outcomes.filter((outcome): outcome is NotDecided => outcome !== 'decided');
  return { batchId, decision, decided: outcomes.length - notDecided.length, notDecided };
};
