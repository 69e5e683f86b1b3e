import { listEntryOf } from '#domain/credit-transfers/list-entry';
import type { CreditTransferRecord, CreditTransferStore } from '#domain/credit-transfers/ports';
import { type DocumentClient, isConditionFailure } from '../aws/dynamodb-client.ts';
import {
  creditTransferKey,
  creditTransferListValues,
  listStatusValues,
  recoveryIndexValues,
  withoutListValues,
} from '../table/keys.ts';
import { RECOVERY_INDEX } from '../table/table-definition.ts';

export type CapacityObserver = (operation: string, capacityUnits: number) => void;

/** The item as stored: keys, the record's fields, and the transfer as the JSON text the client sent. */
export const toCreditTransferItem = ({
  nextCheckAt,
  ...record
}: CreditTransferRecord): Record<string, unknown> => ({
  ...creditTransferKey(record.tenant, record.paymentId),
  type: 'CreditTransfer',
  ...creditTransferListValues(record.tenant, record, listEntryOf(record)),
  ...listStatusValues(record.tenant, record.status),
  ...record,
  // The next recovery check is the recovery index's sort key.
  ...(nextCheckAt !== undefined && recoveryIndexValues(record.tenant, record.paymentId, nextCheckAt)),
  // JSON text keeps every value and the field order exactly as sent.
  transfer: JSON.stringify(record.transfer),
});

/**
 * Whether an item at a transfer's key holds a transfer: the placeholder the start-up realign
 * writes and deletes at once (dropEntryWithoutRecord) holds none, and a read that meets it in
 * between finds no transfer there.
 */
export const holdsCreditTransfer = (
  item: Record<string, unknown> | undefined,
): item is Record<string, unknown> => typeof item?.transfer === 'string';

export const fromCreditTransferItem = (item: Record<string, unknown>): CreditTransferRecord => {
  const { pk: _pk, sk: _sk, type: _type, transfer, ...record } = item;
  const {
    [RECOVERY_INDEX.partitionKey]: _shard,
    [RECOVERY_INDEX.sortKey]: dueAt,
    recoveryAttempt: _attempt,
    ...rest
  } = record;
  return {
    ...(withoutListValues(rest) as Omit<CreditTransferRecord, 'transfer'>),
    ...(typeof dueAt === 'string' && { nextCheckAt: dueAt }),
    transfer: JSON.parse(transfer as string),
  };
};

export class DynamoDbCreditTransferStore implements CreditTransferStore {
  constructor(
    protected readonly client: DocumentClient,
    protected readonly tableName: string,
    private readonly onCapacity?: CapacityObserver,
  ) {}

  async create(record: CreditTransferRecord): Promise<boolean> {
    try {
      const result = await this.client.put({
        TableName: this.tableName,
        Item: toCreditTransferItem(record),
        ConditionExpression: 'attribute_not_exists(pk)',
        ReturnConsumedCapacity: this.onCapacity ? 'TOTAL' : undefined,
      });
      this.onCapacity?.('create', result.ConsumedCapacity?.CapacityUnits ?? 0);
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async get(tenant: string, paymentId: string): Promise<CreditTransferRecord | undefined> {
    const result = await this.client.get({
      TableName: this.tableName,
      Key: creditTransferKey(tenant, paymentId),
      // A client reads its payment right after the 202: it must see it.
      ConsistentRead: true,
      ReturnConsumedCapacity: this.onCapacity ? 'TOTAL' : undefined,
    });
    this.onCapacity?.('get', result.ConsumedCapacity?.CapacityUnits ?? 0);
    return holdsCreditTransfer(result.Item) ? fromCreditTransferItem(result.Item) : undefined;
  }
}
