import { documentClient, tableName } from '#adapters/aws/dynamodb-client';
import { batchLifecycleStarter } from '#adapters/iso20022/batch-lifecycle-starter';
import { DynamoDbBatchStore } from '#adapters/iso20022/batch-store';
import { pain001Reader } from '#adapters/iso20022/xml-schemas';
import { systemClock } from '#domain/commons/ports';
import type { BatchLifecycleStarter } from '#domain/iso20022/ports';
import type { BatchDependencies } from '#domain/iso20022/submit-batch';
import { tableStore } from './dependencies.ts';

// Resolved at each start: the local runtime registers its in-process starter.
const lifecycles: BatchLifecycleStarter = { start: (batch) => batchLifecycleStarter().start(batch) };

let batches: DynamoDbBatchStore | undefined;
export const batchStore = (): DynamoDbBatchStore => {
  batches ??= new DynamoDbBatchStore(documentClient(), tableName());
  return batches;
};

export const batchDependencies = (): BatchDependencies => ({
  store: tableStore(),
  batches: batchStore(),
  reader: pain001Reader,
  clock: systemClock,
  lifecycles,
});
