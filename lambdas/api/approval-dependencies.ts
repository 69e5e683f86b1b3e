import { documentClient, tableName } from '#adapters/aws/dynamodb-client';
import { DynamoDbApprovalStore } from '#adapters/payment-controls/approval-store';
import { systemClock } from '#domain/commons/ports';
import type { ApprovalDependencies } from '#domain/payment-controls/decide-approval';
import { tableStore } from './dependencies.ts';
import { lifecycleWorkflow } from './starting-dependencies.ts';

let approvals: DynamoDbApprovalStore | undefined;

/** The table, the decisions on it, and the lifecycle workflow an approved transfer starts. */
export const approvalDependencies = (): ApprovalDependencies => {
  approvals ??= new DynamoDbApprovalStore(documentClient(), tableName());
  return { store: tableStore(), approvals, clock: systemClock, workflow: lifecycleWorkflow };
};
