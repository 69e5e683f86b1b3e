import type { Clock } from '../commons/ports.ts';
import type { CreditTransferStatus } from '../credit-transfers/credit-transfer-status.ts';
import { isFinal } from '../credit-transfers/lifecycle.ts';
import type { CreditTransferRecord, FinalTransferListener } from '../credit-transfers/ports.ts';
import { derivedEventId } from '../webhooks/webhook-event.ts';
import type { BatchCompletedEvent, BatchEventPublisher, BatchOutcomeStore, BatchRecord } from './ports.ts';
import { statusReasonCodeOf } from './status-codes.ts';

/** ISO's ExternalPaymentGroupStatus1Code as a batch or a payment group reaches it. */
export type GroupStatusCode = 'ACCP' | 'ACSC' | 'PART' | 'RJCT';

/** How many transfers are open, settled, or refused (rejected or cancelled). */
export interface GroupTally {
  open: number;
  settled: number;
  refused: number;
}

/**
 * ISO's group status of a set of transfers: `ACCP` while any is open (the message was accepted and
 * its transfers are under way), then `ACSC` when every one settled, `RJCT` when none did, `PART`
 * when some settled and some were rejected or cancelled.
 */
export const groupStatusOf = (tally: GroupTally): GroupStatusCode => {
  if (tally.open > 0) return 'ACCP';
  if (tally.refused === 0) return 'ACSC';
  return tally.settled === 0 ? 'RJCT' : 'PART';
};

export const tallyOf = (statuses: Iterable<CreditTransferStatus>): GroupTally => {
  const tally = { open: 0, settled: 0, refused: 0 };
  for (const status of statuses) {
    if (status === 'AcceptedSettlementCompleted') tally.settled += 1;
    else if (isFinal(status)) tally.refused += 1;
    else tally.open += 1;
  }
  return tally;
};

/** The batch's own tally, from the counts kept on its item. */
export const batchTallyOf = (batch: BatchRecord): GroupTally => {
  const settled = batch.countsByStatus?.AcceptedSettlementCompleted ?? 0;
  const final = Object.values(batch.countsByStatus ?? {}).reduce((sum, count) => sum + count, 0);
  // A payment group rejected whole at submission (its ReqdExctnDt too far past): refused, none stored.
  const rejectedWhole = batch.message.groups.reduce(
    (sum, group) => sum + (group.rejection?.transactions ?? 0),
    0,
  );
  return { open: batch.count - final, settled, refused: final - settled + rejectedWhole };
};

/** The event id of a batch's completion: the same however often it is published. */
export const batchCompletedEventId = (tenant: string, batchId: string): string =>
  derivedEventId('credit-transfer-batch.completed', tenant, batchId);

export interface BatchOutcomeDependencies {
  batches: BatchOutcomeStore;
  publisher: BatchEventPublisher;
  clock: Clock;
}

/**
 * Counts a final transfer toward its batch (once, whatever the re-runs: the batch item keeps the
 * positions it counted) and, when it was the last one open, marks the batch completed and
 * publishes its event. Every step is safe to repeat: a run cut short after counting is finished
 * by the next, which finds the batch with nothing open and its event not yet noted as published.
 */
export const countFinalTransfer = async (
  deps: BatchOutcomeDependencies,
  record: CreditTransferRecord,
): Promise<void> => {
  if (record.batch === undefined || !isFinal(record.status)) return;
  const { tenant } = record;
  const { batchId, position } = record.batch;
  let batch =
    (await deps.batches.countFinal({
      tenant,
      batchId,
      position,
      status: record.status,
      ...(record.statusReason !== undefined && {
        statusReasonCode: statusReasonCodeOf(record.statusReason, record.statusReasonCode),
      }),
    })) ?? (await deps.batches.get(tenant, batchId));
  if (batch === undefined || batch.open !== 0 || batch.completionPublished === true) return;
  if (batch.completedAt === undefined) {
    batch =
      (await deps.batches.complete(tenant, batchId, deps.clock.now().toISOString())) ??
      (await deps.batches.get(tenant, batchId));
    if (batch?.completedAt === undefined) return;
  }
  const event: BatchCompletedEvent = {
    eventId: batchCompletedEventId(tenant, batchId),
    tenant,
    batchId,
    completedAt: batch.completedAt,
  };
  await deps.publisher.publishBatchCompleted(event);
  await deps.batches.markCompletionPublished(tenant, batchId);
};

export const batchOutcomeListener = (deps: BatchOutcomeDependencies): FinalTransferListener => ({
  transferFinal: (record) => countFinalTransfer(deps, record),
});
