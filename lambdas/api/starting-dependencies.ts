import { pendingAnnouncer } from '#adapters/credit-transfers/pending-announcer';
import { workflowStarter } from '#adapters/credit-transfers/workflow-starter';
import { systemClock } from '#domain/commons/ports';
import type { CancellationDependencies } from '#domain/credit-transfers/cancel-credit-transfer';
import type { InitiationDependencies } from '#domain/credit-transfers/initiate-credit-transfer';
import type { PendingAnnouncer, WorkflowStarter } from '#domain/credit-transfers/ports';
import { tableStore } from './dependencies.ts';

// Resolved at each start: the local runtime registers its in-process runner.
export const lifecycleWorkflow: WorkflowStarter = { start: (start) => workflowStarter().start(start) };

// Resolved at each announcement, as the starter is.
export const heldTransferAnnouncer: PendingAnnouncer = {
  announce: (transfer) => pendingAnnouncer().announce(transfer),
};

/**
 * Initiation: the table, the lifecycle workflow it starts for each new transfer, and the
 * announcer of one held for approval (no workflow for it).
 */
export const initiationDependencies = (): InitiationDependencies => ({
  store: tableStore(),
  clock: systemClock,
  workflow: lifecycleWorkflow,
  announcer: heldTransferAnnouncer,
});

export const cancellationDependencies = (): CancellationDependencies => ({
  store: tableStore(),
  clock: systemClock,
  workflow: lifecycleWorkflow,
});
