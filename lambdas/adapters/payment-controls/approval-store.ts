import type { CreditTransferRecord } from '#domain/credit-transfers/ports';
import type { ApprovalDecision } from '#domain/payment-controls/approval';
import type { ApprovalStore } from '#domain/payment-controls/ports';
import { type DocumentClient, isConditionFailure } from '../aws/dynamodb-client.ts';
import { fromCreditTransferItem } from '../credit-transfers/credit-transfer-store.ts';
import { creditTransferKey, recoveryIndexValues } from '../table/keys.ts';
import { RECOVERY_INDEX } from '../table/table-definition.ts';

/** Decisions on pending transfers, appended to the transfer's item by conditional updates. */
export class DynamoDbApprovalStore implements ApprovalStore {
  constructor(
    private readonly client: DocumentClient,
    private readonly table: string,
  ) {}

  async recordDecision(
    tenant: string,
    paymentId: string,
    decision: ApprovalDecision,
    seen: number,
    nextCheckAt?: Date,
  ): Promise<CreditTransferRecord | undefined> {
    const recovery = nextCheckAt && recoveryIndexValues(tenant, paymentId, nextCheckAt.toISOString());
    try {
      const result = await this.client.update({
        TableName: this.table,
        Key: creditTransferKey(tenant, paymentId),
        UpdateExpression: `SET approval.approvals = list_append(approval.approvals, :decision)${recovery ? ', #shard = :shard, #due = :due' : ''}`,
        // Pending, with exactly the decisions the caller read: a decision that raced it first refuses this one.
        ConditionExpression:
          '#status = :pending AND size(approval.approvals) = :seen AND attribute_not_exists(parked)',
        ExpressionAttributeNames: {
          '#status': 'status',
          ...(recovery && { '#shard': RECOVERY_INDEX.partitionKey, '#due': RECOVERY_INDEX.sortKey }),
        },
        ExpressionAttributeValues: {
          ':pending': 'Pending',
          ':seen': seen,
          ':decision': [decision],
          ...(recovery && {
            ':shard': recovery[RECOVERY_INDEX.partitionKey],
            ':due': recovery[RECOVERY_INDEX.sortKey],
          }),
        },
        ReturnValues: 'ALL_NEW',
      });
      return result.Attributes ? fromCreditTransferItem(result.Attributes) : undefined;
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }
}
