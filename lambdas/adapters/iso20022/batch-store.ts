import type { CreditTransferRecord } from '#domain/credit-transfers/ports';
import type {
  BatchOutcomeStore,
  BatchRecord,
  BatchStore,
  ClaimResult,
  FinalTransfer,
} from '#domain/iso20022/ports';
import { type DocumentClient, isConditionFailure } from '../aws/dynamodb-client.ts';
import { fromCreditTransferItem, holdsCreditTransfer } from '../credit-transfers/credit-transfer-store.ts';
import { batchKey, batchListValues, batchMessageKey, creditTransferKey } from '../table/keys.ts';
import { LIST_INDEXES } from '../table/table-definition.ts';

/** DynamoDB's limit of keys in one BatchGetItem. */
const BATCH_GET_KEYS = 100;
const UNPROCESSED_RETRIES = 8;

/** The positions of the transfers a batch has counted (a number set on its item): each is counted once. */
const COUNTED_ATTRIBUTE = 'countedPositions';

/** The batch an item holds, without its keys, list values and counted positions. */
export const batchOf = (item: Record<string, unknown>): BatchRecord => {
  const {
    pk: _pk,
    sk: _sk,
    type: _type,
    [COUNTED_ATTRIBUTE]: _counted,
    [LIST_INDEXES.all.partitionKey]: _list,
    [LIST_INDEXES.all.sortKey]: _order,
    ...batch
  } = item;
  return batch as unknown as BatchRecord;
};

export class DynamoDbBatchStore implements BatchStore, BatchOutcomeStore {
  constructor(
    private readonly client: DocumentClient,
    private readonly tableName: string,
  ) {}

  async claimMessageId(
    tenant: string,
    messageId: string,
    batchId: string,
    requestHash: string,
  ): Promise<ClaimResult> {
    const key = batchMessageKey(tenant, messageId);
    try {
      await this.client.put({
        TableName: this.tableName,
        Item: { ...key, type: 'BatchMessage', tenant, messageId, batchId, requestHash },
        ConditionExpression: 'attribute_not_exists(pk)',
      });
      return { claimed: true };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    const { Item } = await this.client.get({ TableName: this.tableName, Key: key, ConsistentRead: true });
    if (Item === undefined) throw new Error(`The claim of message id ${messageId} vanished`);
    return {
      claimed: false,
      existing: { batchId: String(Item.batchId), requestHash: String(Item.requestHash) },
    };
  }

  async create(batch: BatchRecord): Promise<boolean> {
    try {
      await this.client.put({
        TableName: this.tableName,
        // Every transfer open, none counted yet: each final one counts down once (countFinal).
        Item: {
          ...batchKey(batch.tenant, batch.batchId),
          type: 'Batch',
          open: batch.count,
          countsByStatus: {},
          countsByReasonCode: {},
          ...batchListValues(batch.tenant, batch.createdAt, batch.batchId),
          ...batch,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      });
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async discard(tenant: string, batchId: string, requestHash: string): Promise<void> {
    try {
      await this.client.delete({
        TableName: this.tableName,
        Key: batchKey(tenant, batchId),
        ConditionExpression: '#state = :storing AND requestHash = :hash',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':storing': 'Storing', ':hash': requestHash },
      });
    } catch (error) {
      // Gone already, or not ours to remove: nothing to undo.
      if (!isConditionFailure(error)) throw error;
    }
  }

  async get(tenant: string, batchId: string): Promise<BatchRecord | undefined> {
    const { Item } = await this.client.get({
      TableName: this.tableName,
      Key: batchKey(tenant, batchId),
      ConsistentRead: true,
    });
    return Item === undefined ? undefined : batchOf(Item);
  }

  async countFinal(transfer: FinalTransfer): Promise<BatchRecord | undefined> {
    const code = transfer.statusReasonCode;
    try {
      const { Attributes } = await this.client.update({
        TableName: this.tableName,
        Key: batchKey(transfer.tenant, transfer.batchId),
        UpdateExpression: [
          'SET #open = #open - :one',
          '#byStatus.#status = if_not_exists(#byStatus.#status, :zero) + :one',
          ...(code !== undefined ? ['#byCode.#code = if_not_exists(#byCode.#code, :zero) + :one'] : []),
        ]
          .join(', ')
          .concat(' ADD #counted :position'),
        ConditionExpression: 'attribute_exists(#open) AND NOT contains(#counted, :at)',
        ExpressionAttributeNames: {
          '#open': 'open',
          '#byStatus': 'countsByStatus',
          '#status': transfer.status,
          '#counted': COUNTED_ATTRIBUTE,
          ...(code !== undefined && { '#byCode': 'countsByReasonCode', '#code': code }),
        },
        ExpressionAttributeValues: {
          ':one': 1,
          ':zero': 0,
          ':position': new Set([transfer.position]),
          ':at': transfer.position,
        },
        ReturnValues: 'ALL_NEW',
      });
      return Attributes === undefined ? undefined : batchOf(Attributes);
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }

  async complete(tenant: string, batchId: string, at: string): Promise<BatchRecord | undefined> {
    try {
      const { Attributes } = await this.client.update({
        TableName: this.tableName,
        Key: batchKey(tenant, batchId),
        UpdateExpression: 'SET completedAt = :at',
        ConditionExpression: '#open = :zero AND attribute_not_exists(completedAt)',
        ExpressionAttributeNames: { '#open': 'open' },
        ExpressionAttributeValues: { ':at': at, ':zero': 0 },
        ReturnValues: 'ALL_NEW',
      });
      return Attributes === undefined ? undefined : batchOf(Attributes);
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }

  async markCompletionPublished(tenant: string, batchId: string): Promise<void> {
    await this.client.update({
      TableName: this.tableName,
      Key: batchKey(tenant, batchId),
      UpdateExpression: 'SET completionPublished = :yes',
      ConditionExpression: 'attribute_exists(completedAt)',
      ExpressionAttributeValues: { ':yes': true },
    });
  }

  async markStored(tenant: string, batchId: string): Promise<boolean> {
    try {
      await this.client.update({
        TableName: this.tableName,
        Key: batchKey(tenant, batchId),
        UpdateExpression: 'SET #state = :stored',
        ConditionExpression: '#state = :storing',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':stored': 'Stored', ':storing': 'Storing' },
      });
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async transfers(
    tenant: string,
    paymentIds: readonly string[],
  ): Promise<(CreditTransferRecord | undefined)[]> {
    const found = new Map<string, CreditTransferRecord>();
    for (let start = 0; start < paymentIds.length; start += BATCH_GET_KEYS) {
      let keys: Record<string, unknown>[] = paymentIds
        .slice(start, start + BATCH_GET_KEYS)
        .map((paymentId) => creditTransferKey(tenant, paymentId) as unknown as Record<string, unknown>);
      for (let attempt = 0; keys.length > 0; attempt++) {
        if (attempt > UNPROCESSED_RETRIES) throw new Error('The table kept some batch reads unprocessed');
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt));
        const result = await this.client.batchGet({
          RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true } },
        });
        for (const item of result.Responses?.[this.tableName] ?? []) {
          if (holdsCreditTransfer(item)) {
            const record = fromCreditTransferItem(item);
            found.set(record.paymentId, record);
          }
        }
        keys =
          (result.UnprocessedKeys?.[this.tableName]?.Keys as Record<string, unknown>[] | undefined) ?? [];
      }
    }
    return paymentIds.map((paymentId) => found.get(paymentId));
  }
}
