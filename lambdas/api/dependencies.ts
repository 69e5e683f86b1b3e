import { DynamoDbLifecycleStore } from '#adapters/credit-transfer-lifecycle-store';
import { documentClient, tableName } from '#adapters/dynamodb-client';
import { type Clock, type CreditTransferStore, systemClock } from '#domain/ports';

/**
 * The table store, and only it: a handler that also starts workflows takes its starter from
 * starting-dependencies.ts, so a function that never starts one never loads the Step Functions client.
 */
export interface ApiDependencies {
  store: CreditTransferStore;
  clock: Clock;
}

let store: DynamoDbLifecycleStore | undefined;
/** The real table adapter, built once per container on first use. */
export const tableStore = (): DynamoDbLifecycleStore => {
  store ??= new DynamoDbLifecycleStore(documentClient(), tableName());
  return store;
};

export const apiDependencies = (): ApiDependencies => ({ store: tableStore(), clock: systemClock });
