import { TENANT_ID_PATTERN } from '#domain/access/client';
import { batchTallyOf, groupStatusOf } from '#domain/iso20022/batch-outcome';
import type { CompletedBatches } from '#domain/webhooks/webhook-delivery';
import type { CompletedBatch } from '#domain/webhooks/webhook-event';
import type { DocumentClient } from '../aws/dynamodb-client.ts';
import { DynamoDbBatchStore } from '../iso20022/batch-store.ts';

/** Completed batches from the batch items (one strongly consistent GetItem each). */
export class DynamoDbCompletedBatches implements CompletedBatches {
  private readonly batches: DynamoDbBatchStore;

  constructor(client: DocumentClient, tableName: string) {
    this.batches = new DynamoDbBatchStore(client, tableName);
  }

  async completed(tenant: string, batchId: string): Promise<CompletedBatch | undefined> {
    if (!TENANT_ID_PATTERN.test(tenant) || !/^[0-9a-f-]{36}$/.test(batchId)) return undefined;
    const batch = await this.batches.get(tenant, batchId);
    if (batch?.completedAt === undefined) return undefined;
    const groupStatus = groupStatusOf(batchTallyOf(batch));
    if (groupStatus === 'ACCP') return undefined;
    return {
      tenant,
      batchId,
      messageId: batch.message.messageId,
      count: batch.count,
      groupStatus,
      countsByStatus: batch.countsByStatus ?? {},
      countsByReasonCode: batch.countsByReasonCode ?? {},
      completedAt: batch.completedAt,
    };
  }
}
