import { TENANT_ID_PATTERN } from '#domain/access/client';
import type { StatusChange } from '#domain/credit-transfers/ports';
import type { PendingApproval } from '#domain/payment-controls/approval';
import type { TransferHistories } from '#domain/webhooks/status-event-check';
import type { TransferApprovals } from '#domain/webhooks/webhook-delivery';
import type { DocumentClient } from '../aws/dynamodb-client.ts';
import { creditTransferKey } from '../table/keys.ts';

/**
 * The histories of stored transfers, for checking status events: one strongly consistent
 * GetItem of the transfer, its history only (and its approval, read apart, for the rare change
 * to or from Pending). A tenant no key can hold (outside TENANT_ID_PATTERN)
 * has no transfer, and is not read at all.
 */
export class DynamoDbTransferHistories implements TransferHistories, TransferApprovals {
  constructor(
    private readonly client: DocumentClient,
    private readonly tableName: string,
  ) {}

  async history(tenant: string, paymentId: string): Promise<readonly StatusChange[] | undefined> {
    if (!TENANT_ID_PATTERN.test(tenant)) return undefined;
    const { Item } = await this.client.get({
      TableName: this.tableName,
      Key: creditTransferKey(tenant, paymentId),
      ConsistentRead: true,
      // The item's other attributes are no part of the check (and cost nothing less to read).
      ProjectionExpression: '#history, #transfer',
      ExpressionAttributeNames: { '#history': 'history', '#transfer': 'transfer' },
    });
    // The start-up realign's placeholder at a transfer's key holds no transfer.
    if (typeof Item?.transfer !== 'string' || !Array.isArray(Item.history)) return undefined;
    return Item.history as StatusChange[];
  }

  /** The transfer's approval, kept once decided; one strongly consistent GetItem of it alone. */
  async approval(tenant: string, paymentId: string): Promise<PendingApproval | undefined> {
    if (!TENANT_ID_PATTERN.test(tenant)) return undefined;
    const { Item } = await this.client.get({
      TableName: this.tableName,
      Key: creditTransferKey(tenant, paymentId),
      ConsistentRead: true,
      ProjectionExpression: '#approval',
      ExpressionAttributeNames: { '#approval': 'approval' },
    });
    return Item?.approval as PendingApproval | undefined;
  }
}
