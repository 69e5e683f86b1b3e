import type { AuthenticationThrottlePolicy } from '#domain/client';
import type { AuthenticationAttempt, AuthenticationThrottle } from '#domain/ports';
import { type DocumentClient, isConditionFailure } from './dynamodb-client.ts';
import { authenticationFailuresKey } from './keys.ts';

/** The TTL attribute (epoch seconds) DynamoDB deletes the item by; also the end of the window. */
export const EXPIRES_AT_ATTRIBUTE = 'expiresAt';

/** Races between parallel requests settle in a round or two; beyond that the attempt is refused. */
const MAX_ROUNDS = 4;

const epochSeconds = (date: Date): number => Math.floor(date.getTime() / 1000);

/**
 * Counts attempts per client id in one item with atomic, conditional updates: one adds an attempt
 * to a live window under the limit, another starts a window where there is none or it has ended.
 * A window past `expiresAt` counts as absent whether or not TTL has deleted it yet (TTL deletes
 * within days, and dynalite never).
 */
export class DynamoDbAuthenticationThrottle implements AuthenticationThrottle {
  constructor(
    private readonly client: DocumentClient,
    private readonly tableName: string,
    private readonly policy: AuthenticationThrottlePolicy,
  ) {}

  async attempt(clientId: string, now: Date): Promise<AuthenticationAttempt> {
    const Key = authenticationFailuresKey(clientId);
    const nowSeconds = epochSeconds(now);
    for (let round = 0; round < MAX_ROUNDS; round++) {
      try {
        await this.client.update({
          TableName: this.tableName,
          Key,
          UpdateExpression: 'SET failures = failures + :one',
          ConditionExpression: '#expiresAt > :now AND failures < :max',
          ExpressionAttributeNames: { '#expiresAt': EXPIRES_AT_ATTRIBUTE },
          ExpressionAttributeValues: { ':one': 1, ':now': nowSeconds, ':max': this.policy.maxFailures },
        });
        return { allowed: true };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
      const { Item } = await this.client.get({ TableName: this.tableName, Key, ConsistentRead: true });
      const expiresAt = Number(Item?.[EXPIRES_AT_ATTRIBUTE] ?? 0);
      if (expiresAt > nowSeconds && Number(Item?.failures) >= this.policy.maxFailures) {
        return {
          allowed: false,
          retryAfterSeconds: Math.min(expiresAt - nowSeconds, this.policy.windowSeconds),
        };
      }
      if (expiresAt > nowSeconds) continue; // a window another request just started: count in it
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
        return { allowed: true };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    }
    return { allowed: false, retryAfterSeconds: 1 };
  }

  async succeeded(clientId: string): Promise<void> {
    try {
      // The item stays with its expiresAt, so TTL still removes it.
      await this.client.update({
        TableName: this.tableName,
        Key: authenticationFailuresKey(clientId),
        UpdateExpression: 'SET failures = :zero',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':zero': 0 },
      });
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
}
