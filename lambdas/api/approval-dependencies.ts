import { documentClient, tableName } from '#adapters/aws/dynamodb-client';
import { DynamoDbApprovalStore } from '#adapters/payment-controls/approval-store';
import { DynamoDbLimitCounters } from '#adapters/payment-controls/limit-counters';
import { systemClock } from '#domain/commons/ports';
import type { ApprovalDependencies } from '#domain/payment-controls/decide-approval';
import type { BatchApprovalDependencies } from '#domain/payment-controls/decide-batch-approval';
import { batchStore } from './batch-dependencies.ts';
import { tableStore } from './dependencies.ts';
import { lifecycleWorkflow } from './starting-dependencies.ts';

let approvals: DynamoDbApprovalStore | undefined;
let counters: DynamoDbLimitCounters | undefined;

/**
 * The table, the decisions on it, the limit counters (an approval past a limit counts then), and
 * the lifecycle workflow an approved transfer starts.
 */
export const approvalDependencies = (): ApprovalDependencies => {
  approvals ??= new DynamoDbApprovalStore(documentClient(), tableName());
  counters ??= new DynamoDbLimitCounters(documentClient(), tableName());
  return { store: tableStore(), approvals, counters, clock: systemClock, workflow: lifecycleWorkflow };
};

/** As approvalDependencies, and the batch items whose held transfers a batch decision decides. */
export const batchApprovalDependencies = (): BatchApprovalDependencies => ({
  ...approvalDependencies(),
  batches: batchStore(),
});
