import { DynamoDbLifecycleStore } from '#adapters/credit-transfer-lifecycle-store';
import { documentClient, tableName } from '#adapters/dynamodb-client';
import { workflowStarter } from '#adapters/workflow-starter';
import type { CancellationDependencies } from '#domain/cancel-credit-transfer';
import { type Clock, type CreditTransferStore, systemClock, type WorkflowStarter } from '#domain/ports';

export interface ApiDependencies {
  store: CreditTransferStore;
  clock: Clock;
  /** Starts the lifecycle workflow of a new transfer. */
  workflow?: WorkflowStarter;
}

// Resolved at each start: the local runtime registers its in-process runner.
const workflow: WorkflowStarter = { start: (start) => workflowStarter().start(start) };

let store: DynamoDbLifecycleStore | undefined;
/** The real table adapter, built once per container on first use. */
const tableStore = (): DynamoDbLifecycleStore => {
  store ??= new DynamoDbLifecycleStore(documentClient(), tableName());
  return store;
};

export const apiDependencies = (): ApiDependencies => ({ store: tableStore(), clock: systemClock, workflow });

export const cancellationDependencies = (): CancellationDependencies => ({
  store: tableStore(),
  clock: systemClock,
  workflow,
});
