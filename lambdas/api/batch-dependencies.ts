import { documentClient, tableName } from '#adapters/aws/dynamodb-client';
import { workflowStarter } from '#adapters/credit-transfers/workflow-starter';
import { DynamoDbBatchStore } from '#adapters/iso20022/batch-store';
import { pain001Reader } from '#adapters/iso20022/xml-schemas';
import { systemClock } from '#domain/commons/ports';
import type { WorkflowStarter } from '#domain/credit-transfers/ports';
import type { BatchDependencies } from '#domain/iso20022/submit-batch';
import { tableStore } from './dependencies.ts';

// Resolved at each start: the local runtime registers its in-process runner.
const workflow: WorkflowStarter = { start: (start) => workflowStarter().start(start) };

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
  workflow,
});
