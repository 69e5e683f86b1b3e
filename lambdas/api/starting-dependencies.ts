import { workflowStarter } from '#adapters/workflow-starter';
import type { CancellationDependencies } from '#domain/cancel-credit-transfer';
import type { InitiationDependencies } from '#domain/initiate-credit-transfer';
import { systemClock, type WorkflowStarter } from '#domain/ports';
import { tableStore } from './dependencies.ts';

// Resolved at each start: the local runtime registers its in-process runner.
const workflow: WorkflowStarter = { start: (start) => workflowStarter().start(start) };

/** Initiation: the table, and the lifecycle workflow it starts for each new transfer. */
export const initiationDependencies = (): InitiationDependencies => ({
  store: tableStore(),
  clock: systemClock,
  workflow,
});

export const cancellationDependencies = (): CancellationDependencies => ({
  store: tableStore(),
  clock: systemClock,
  workflow,
});
