import type { AuthenticationThrottlePolicy } from '#domain/access/client';
import type {
  AuthenticationAttempt,
  AuthenticationCaller,
  AuthenticationThrottle,
} from '#domain/access/ports';
import { type DocumentClient, isConditionFailure } from '../aws/dynamodb-client.ts';
import { authenticationFailuresKey } from '../table/keys.ts';

/** The TTL attribute (epoch seconds) DynamoDB deletes the item by; also the end of the window. */
export const EXPIRES_AT_ATTRIBUTE = 'expiresAt';

/** Two requests failing at once settle in a round or two; the count is never lost, only retried. */
const MAX_ROUNDS = 4;

const epochSeconds = (date: Date): number => Math.floor(date.getTime() / 1000);

/**
 * Counts failed authentications per client id and source address, one item each: a read before
 * the secret is checked, an atomic conditional update once it is known to be wrong (one adds to a
 * live window, another starts a window where there is none or it has ended). A window past
 * `expiresAt` counts as absent whether or not TTL has deleted it yet (TTL deletes within days,
 * and dynalite never).
 */
export class DynamoDbAuthenticationThrottle implements AuthenticationThrottle {
  constructor(
    private readonly client: DocumentClient,
    private readonly tableName: string,
    private readonly policy: AuthenticationThrottlePolicy,
  ) {}

  async check(
    caller: AuthenticationCaller,
    now: Date,
  ): Promise<AuthenticationAttempt & { failures: number }> {
    const { Item } = await this.client.get({
      TableName: this.tableName,
      Key: authenticationFailuresKey(caller),
      ConsistentRead: true,
    });
    const nowSeconds = epochSeconds(now);
    const expiresAt = Number(Item?.[EXPIRES_AT_ATTRIBUTE] ?? 0);
    const failures = expiresAt > nowSeconds ? Number(Item?.failures ?? 0) : 0;
    if (failures < this.policy.maxFailures) return { allowed: true, failures };
    return {
      allowed: false,
      failures,
      retryAfterSeconds: Math.min(expiresAt - nowSeconds, this.policy.windowSeconds),
    };
  }

  async failed(caller: AuthenticationCaller, now: Date): Promise<void> {
    const Key = authenticationFailuresKey(caller);
    const nowSeconds = epochSeconds(now);
    for (let round = 0; round < MAX_ROUNDS; round++) {
      try {
        await this.client.update({
          TableName: this.tableName,
          Key,
          UpdateExpression: 'SET failures = failures + :one',
          ConditionExpression: '#expiresAt > :now',
          ExpressionAttributeNames: { '#expiresAt': EXPIRES_AT_ATTRIBUTE },
          ExpressionAttributeValues: { ':one': 1, ':now': nowSeconds },
        });
        return;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
      try {
        await this.client.update({
          TableName: this.tableName,
          Key,
          UpdateExpression: 'SET failures = :one, #expiresAt = :end, #type = :type',
          ConditionExpression: 'attribute_not_exists(pk) OR #expiresAt <= :now',
          ExpressionAttributeNames: { '#expiresAt': EXPIRES_AT_ATTRIBUTE, '#type': 'type' },
          ExpressionAttributeValues: {
            ':one': 1,
            ':now': nowSeconds,
            ':end': nowSeconds + this.policy.windowSeconds,
            ':type': 'AuthenticationFailures',
          },
        });
        return;
      } catch (error) {
        // Another failure just started the window: count in it, next round.
        if (!isConditionFailure(error)) throw error;
      }
    }
    throw new Error('The failed authentication could not be counted: the count kept changing');
  }

  async succeeded(caller: AuthenticationCaller): Promise<void> {
    try {
      // The item stays with its expiresAt, so TTL still removes it.
      await this.client.update({
        TableName: this.tableName,
        Key: authenticationFailuresKey(caller),
        UpdateExpression: 'SET failures = :zero',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':zero': 0 },
      });
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
}
