import { documentClient, tableName } from '#adapters/aws/dynamodb-client';
import { DynamoDbLifecycleStore } from '#adapters/credit-transfers/credit-transfer-lifecycle-store';
import { type Clock, systemClock } from '#domain/commons/ports';
import type { CreditTransferStore } from '#domain/credit-transfers/ports';

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
