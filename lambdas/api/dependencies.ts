import { DynamoDbCreditTransferStore } from '#adapters/credit-transfer-store';
import { documentClient, tableName } from '#adapters/dynamodb-client';
import { type Clock, type CreditTransferStore, systemClock } from '#domain/ports';

export interface ApiDependencies {
  store: CreditTransferStore;
  clock: Clock;
}

let wired: ApiDependencies | undefined;

/** The real adapters, built once per container on first use. */
export const apiDependencies = (): ApiDependencies => {
  wired ??= { store: new DynamoDbCreditTransferStore(documentClient(), tableName()), clock: systemClock };
  return wired;
};
