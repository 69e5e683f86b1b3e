import { type BatchPageQuery, batchTransfersPage } from '../iso20022/batch-view.ts';
import type { BatchStore } from '../iso20022/ports.ts';
import type { ApprovalDecision } from './approval.ts';

/** A decision on a transfer of the batch, as the single transfer's decisions list it, with its paymentId. */
export type BatchApprovalDecision = Omit<ApprovalDecision, 'idempotencyKey'> & { paymentId: string };

/**
 * The decisions on a batch's transfers, a page of the batch at a time (its transfers in message
 * order, as the batch's own page): each transfer held for approval with its decisions, oldest
 * first. Another tenant's batch is answered as an unknown one.
 */
export const listBatchApprovalDecisions = async (
  batches: BatchStore,
  query: BatchPageQuery,
): Promise<{ batchId: string; decisions: BatchApprovalDecision[]; next?: string }> => {
  const { batch, records, next } = await batchTransfersPage(batches, query);
  const decisions = records.flatMap((record) =>
    (record?.approval?.approvals ?? []).map(({ idempotencyKey: _key, ...decision }) => ({
      paymentId: record?.paymentId as string,
      ...decision,
    })),
  );
  return { batchId: batch.batchId, decisions, ...(next !== undefined && { next }) };
};
