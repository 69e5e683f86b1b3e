import type { SigningKeyScheduleStore } from '#domain/access/ports';
import type { ScheduledSigningKey, SigningKeySchedule } from '#domain/access/token-signer';
import { type DocumentClient, isConditionFailure } from '../aws/dynamodb-client.ts';
import { signingKeyScheduleKey } from '../table/keys.ts';

const isIsoTime = (value: unknown): value is string =>
  typeof value === 'string' && !Number.isNaN(Date.parse(value));

const keyOf = (value: unknown): ScheduledSigningKey => {
  const { keyId, signsFrom, retiresAt } = (value ?? {}) as Record<string, unknown>;
  if (
    typeof keyId !== 'string' ||
    keyId === '' ||
    !isIsoTime(signsFrom) ||
    (retiresAt !== undefined && !isIsoTime(retiresAt))
  ) {
    throw new Error('The stored signing key schedule is malformed');
  }
  return { keyId, signsFrom, ...(retiresAt !== undefined && { retiresAt }) };
};

/** The signing key schedule as one item of the table, beside the data it protects. */
export class DynamoDbSigningKeyScheduleStore implements SigningKeyScheduleStore {
  constructor(
    private readonly client: DocumentClient,
    private readonly tableName: string,
    private readonly consistentRead = false,
  ) {}

  async get(): Promise<SigningKeySchedule | undefined> {
    const { Item } = await this.client.get({
      TableName: this.tableName,
      Key: signingKeyScheduleKey(),
      ConsistentRead: this.consistentRead,
    });
    if (Item === undefined) return undefined;
    if (!Array.isArray(Item.keys) || Item.keys.length === 0 || !Number.isSafeInteger(Item.revision)) {
      throw new Error('The stored signing key schedule is malformed');
    }
    return { keys: Item.keys.map(keyOf), revision: Item.revision as number };
  }

  async put(schedule: SigningKeySchedule, expectedRevision: number): Promise<boolean> {
    try {
      await this.client.put({
        TableName: this.tableName,
        Item: { ...signingKeyScheduleKey(), type: 'SigningKeySchedule', ...schedule },
        ...(expectedRevision === 0
          ? { ConditionExpression: 'attribute_not_exists(pk)' }
          : {
              ConditionExpression: 'revision = :expected',
              ExpressionAttributeValues: { ':expected': expectedRevision },
            }),
      });
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}
