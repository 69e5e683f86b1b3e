import type { PaymentHistory } from '#domain/payment-controls/ports';
import type { DocumentClient } from '../aws/dynamodb-client.ts';
import { creditTransferKey, listCreditorAccountIdKey, listPositionOf } from '../table/keys.ts';
import { LIST_ENTRY_ATTRIBUTE, LIST_INDEXES } from '../table/table-definition.ts';

/** Pages of the creditor's transfers read at most, newest first, before the creditor counts as new. */
const MAX_PAGES = 3;

/**
 * "Paid before" means a transfer from the account to the creditor that settled: the creditor's
 * list partition (newest first), filtered on the debtor account, then each match's status.
 */
export class DynamoDbPaymentHistory implements PaymentHistory {
  constructor(
    private readonly client: DocumentClient,
    private readonly table: string,
  ) {}

  async hasPaid(tenant: string, debtorAccountId: string, creditorAccountId: string): Promise<boolean> {
    const index = LIST_INDEXES.creditorAccountId;
    let start: Record<string, unknown> | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const answer = await this.client.query({
        TableName: this.table,
        IndexName: index.indexName,
        KeyConditionExpression: '#pk = :pk',
        FilterExpression: '#entry.debtorAccountId = :debtor',
        ExpressionAttributeNames: { '#pk': index.partitionKey, '#entry': LIST_ENTRY_ATTRIBUTE },
        ExpressionAttributeValues: {
          ':pk': listCreditorAccountIdKey(tenant, creditorAccountId),
          ':debtor': debtorAccountId,
        },
        ScanIndexForward: false,
        Limit: 100,
        ...(start !== undefined && { ExclusiveStartKey: start }),
      });
      for (const item of answer.Items ?? []) {
        const { paymentId } = listPositionOf(item[index.sortKey] as string);
        const transfer = await this.client.get({
          TableName: this.table,
          Key: creditTransferKey(tenant, paymentId),
          ProjectionExpression: '#status',
          ExpressionAttributeNames: { '#status': 'status' },
        });
        if (transfer.Item?.status === 'AcceptedSettlementCompleted') return true;
      }
      start = answer.LastEvaluatedKey;
      if (start === undefined) return false;
    }
    return false;
  }
}
