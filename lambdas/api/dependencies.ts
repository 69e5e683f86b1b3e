import { DynamoDbCreditTransferStore } from '#adapters/credit-transfer-store';
import { documentClient, tableName } from '#adapters/dynamodb-client';
import { workflowStarter } from '#adapters/workflow-starter';
import { type Clock, type CreditTransferStore, systemClock, type WorkflowStarter } from '#domain/ports';

export interface ApiDependencies {
  store: CreditTransferStore;
  clock: Clock;
  /** Starts the lifecycle workflow of a new transfer. */
  workflow?: WorkflowStarter;
}

let wired: ApiDependencies | undefined;

/** The real adapters, built once per container on first use. */
export const apiDependencies = (): ApiDependencies => {
  wired ??= {
    store: new DynamoDbCreditTransferStore(documentClient(), tableName()),
    clock: systemClock,
    // Resolved at each start: the local runtime registers its in-process runner.
    workflow: { start: (start) => workflowStarter().start(start) },
  };
  return wired;
};
