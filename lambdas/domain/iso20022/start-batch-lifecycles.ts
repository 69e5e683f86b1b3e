import type { WorkflowStarter } from '../credit-transfers/ports.ts';
import { inPool } from './pool.ts';
import type { BatchReference, BatchStore } from './ports.ts';
import { batchPaymentIds } from './submit-batch.ts';

/**
 * Starts at once: Step Functions' StartExecution bucket refills at 150 to 300 a second, and the
 * SDK's adaptive retries slow each caller down on throttling; 16 in flight keep well within it.
 */
export const START_CONCURRENCY = 16;

export interface BatchLifecyclesDependencies {
  batches: Pick<BatchStore, 'get'>;
  workflow: WorkflowStarter;
}

export interface BatchLifecyclesReport {
  /** False for a batch that is not there or not stored yet: nothing to start. */
  found: boolean;
  /** Lifecycles asked to start (a start under a name used already starts nothing). */
  started: number;
  /** Starts that failed: those transfers stay due in the recovery index, for the reconciler. */
  failed: number;
}

/**
 * Starts the lifecycle of every transfer of a stored batch, a bounded number at a time. Each
 * execution's name is derived from its transfer, so a repeat (a retried invocation, a second
 * request that stored the same batch) starts nothing twice.
 */
export const startBatchLifecycles = async (
  deps: BatchLifecyclesDependencies,
  { tenant, batchId }: BatchReference,
): Promise<BatchLifecyclesReport> => {
  const batch = await deps.batches.get(tenant, batchId);
  // Not stored yet: the request storing it asks again once it is (or a repeat of it does).
  if (batch === undefined || batch.state !== 'Stored') return { found: false, started: 0, failed: 0 };
  let failed = 0;
  await inPool(batchPaymentIds(batch), START_CONCURRENCY, async (paymentId) => {
    try {
      await deps.workflow.start({ tenant, paymentId, trigger: 'initiation' });
    } catch {
      failed += 1;
    }
  });
  return { found: true, started: batch.count - failed, failed };
};
