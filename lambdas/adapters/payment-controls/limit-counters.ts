import type { CounterBound, LimitCounterKey, LimitUsage } from '#domain/payment-controls/limits';
import type { LimitCounters } from '#domain/payment-controls/ports';
import { type DocumentClient, isConditionFailure } from '../aws/dynamodb-client.ts';
import { limitCounterKey } from '../table/keys.ts';

type Item = Record<string, unknown>;

/** A number attribute as read: a JavaScript number, or a BigInt past 2^53 (the SDK's unmarshalling). */
const asBigInt = (value: unknown): bigint =>
  typeof value === 'bigint' ? value : typeof value === 'number' ? BigInt(value) : 0n;

const usageOf = (item: Item | undefined): LimitUsage => ({
  usedUnits: asBigInt(item?.usedUnits),
  usedCount: Number(item?.usedCount ?? 0),
});

const marks = (item: Item | undefined, attribute: 'reserving' | 'releasing'): ReadonlySet<string> =>
  (item?.[attribute] as Set<string> | undefined) ?? new Set();

/**
 * Limit counters in the table: `usedUnits` and `usedCount` moved by ADD in a conditional
 * UpdateItem, so of racing reservations exactly as many are admitted as the bound allows. The
 * string sets `reserving` and `releasing` hold the paymentIds of writes their records have not
 * noted yet (see LimitCounters).
 */
export class DynamoDbLimitCounters implements LimitCounters {
  constructor(
    private readonly client: DocumentClient,
    private readonly table: string,
  ) {}

  async reserve(
    key: LimitCounterKey,
    paymentId: string,
    amountUnits: bigint,
    bound: CounterBound | 'unbounded',
    repeat = false,
  ): Promise<{ counted: true } | { counted: false; usage: LimitUsage }> {
    const limits = bound === 'unbounded' ? {} : bound;
    const conditions = ['NOT contains(reserving, :paymentId)'];
    if (limits.maxUsedUnits !== undefined)
      conditions.push('(attribute_not_exists(usedUnits) OR usedUnits <= :maxUsedUnits)');
    if (limits.maxUsedCount !== undefined)
      conditions.push('(attribute_not_exists(usedCount) OR usedCount <= :maxUsedCount)');
    // A transfer larger than the limit alone is refused without a write.
    const fits =
      (limits.maxUsedUnits === undefined || limits.maxUsedUnits >= 0n) &&
      (limits.maxUsedCount === undefined || limits.maxUsedCount >= 0);
    if (fits) {
      try {
        await this.client.update({
          TableName: this.table,
          Key: limitCounterKey(key),
          UpdateExpression: 'SET tenant = :tenant ADD usedUnits :amount, usedCount :one, reserving :marks',
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeValues: {
            ':tenant': key.tenant,
            ':amount': amountUnits,
            ':one': 1,
            ':marks': new Set([paymentId]),
            ':paymentId': paymentId,
            ...(limits.maxUsedUnits !== undefined && { ':maxUsedUnits': limits.maxUsedUnits }),
            ...(limits.maxUsedCount !== undefined && { ':maxUsedCount': limits.maxUsedCount }),
          },
        });
        return { counted: true };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    }
    const item = await this.read(key);
    const reserved = marks(item, 'reserving').has(paymentId);
    const released = marks(item, 'releasing').has(paymentId);
    if (reserved && !released) return { counted: true };
    // Counted and given back by an attempt that stopped before its record noted either: start afresh.
    if (reserved && released && !repeat) {
      await this.acknowledge(key, paymentId);
      return this.reserve(key, paymentId, amountUnits, bound, true);
    }
    return { counted: false, usage: usageOf(item) };
  }

  async release(key: LimitCounterKey, paymentId: string, amountUnits: bigint): Promise<void> {
    try {
      await this.client.update({
        TableName: this.table,
        Key: limitCounterKey(key),
        UpdateExpression: 'ADD usedUnits :amount, usedCount :minusOne, releasing :marks',
        // Only a counter that exists: a release never creates one with negative usage.
        ConditionExpression: 'attribute_exists(pk) AND NOT contains(releasing, :paymentId)',
        ExpressionAttributeValues: {
          ':amount': -amountUnits,
          ':minusOne': -1,
          ':marks': new Set([paymentId]),
          ':paymentId': paymentId,
        },
      });
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  async acknowledge(key: LimitCounterKey, paymentId: string): Promise<void> {
    try {
      await this.client.update({
        TableName: this.table,
        Key: limitCounterKey(key),
        UpdateExpression: 'DELETE reserving :marks, releasing :marks',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':marks': new Set([paymentId]) },
      });
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  async usage(key: LimitCounterKey): Promise<LimitUsage> {
    return usageOf(await this.read(key));
  }

  private async read(key: LimitCounterKey): Promise<Item | undefined> {
    const answer = await this.client.get({
      TableName: this.table,
      Key: limitCounterKey(key),
      ConsistentRead: true,
    });
    return answer.Item;
  }
}
