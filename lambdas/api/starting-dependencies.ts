import { workflowStarter } from '#adapters/credit-transfers/workflow-starter';
import { systemClock } from '#domain/commons/ports';
import type { CancellationDependencies } from '#domain/credit-transfers/cancel-credit-transfer';
import type { InitiationDependencies } from '#domain/credit-transfers/initiate-credit-transfer';
import type { WorkflowStarter } from '#domain/credit-transfers/ports';
import { tableStore } from './dependencies.ts';

// Resolved at each start: the local runtime registers its in-process runner.
export const lifecycleWorkflow: WorkflowStarter = { start: (start) => workflowStarter().start(start) };

/** Initiation: the table, and the lifecycle workflow it starts for each new transfer. */
export const initiationDependencies = (): InitiationDependencies => ({
  store: tableStore(),
  clock: systemClock,
  workflow: lifecycleWorkflow,
});

export const cancellationDependencies = (): CancellationDependencies => ({
  store: tableStore(),
  clock: systemClock,
  workflow: lifecycleWorkflow,
});
