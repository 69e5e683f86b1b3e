import type { ReplayGuard } from '#domain/access/ports';
import { type DocumentClient, isConditionFailure } from '../aws/dynamodb-client.ts';
import { usedJtiKey } from '../table/keys.ts';
import { EXPIRES_AT_ATTRIBUTE } from './authentication-throttle.ts';

/**
 * One conditional put per jti: it succeeds where no record is, or where the one there has expired
 * (TTL deletes within days, dynalite never), and fails on a replay. One write unit per check.
 */
export class DynamoDbReplayGuard implements ReplayGuard {
  constructor(
    private readonly client: DocumentClient,
    private readonly tableName: string,
  ) {}

  async firstUse(
    kind: 'assertion' | 'dpop',
    owner: string,
    jti: string,
    expiresAt: number,
    now: Date,
  ): Promise<boolean> {
    try {
      await this.client.put({
        TableName: this.tableName,
        Item: { ...usedJtiKey(kind, owner, jti), type: 'UsedJti', [EXPIRES_AT_ATTRIBUTE]: expiresAt },
        ConditionExpression: 'attribute_not_exists(pk) OR #expiresAt <= :now',
        ExpressionAttributeNames: { '#expiresAt': EXPIRES_AT_ATTRIBUTE },
        ExpressionAttributeValues: { ':now': Math.floor(now.getTime() / 1000) },
      });
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}
