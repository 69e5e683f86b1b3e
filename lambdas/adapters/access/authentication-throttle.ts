import type { AuthenticationThrottlePolicy } from '#domain/access/client';
import type {
  AuthenticationAttempt,
  AuthenticationCaller,
  AuthenticationCheck,
  AuthenticationThrottle,
} from '#domain/access/ports';
import { type DocumentClient, isConditionFailure } from '../aws/dynamodb-client.ts';
import { authenticationFailuresKey, secretCheckBudgetKey } from '../table/keys.ts';

/** The TTL attribute (epoch seconds) DynamoDB deletes the item by; also the end of the window. */
export const EXPIRES_AT_ATTRIBUTE = 'expiresAt';

/** Two requests failing at once settle in a round or two; the count is never lost, only retried. */
const MAX_ROUNDS = 4;
/**
 * How long a check waits for places held by checks in flight (each ends within two derivations)
 * before it answers 429, and how often it looks again.
 */
const MAX_WAIT_MS = 10_000;
const WAIT_STEP_MS = 50;

const epochSeconds = (date: Date): number => Math.floor(date.getTime() / 1000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Counts secret checks per client id and source address, one item each. A check claims its place
 * atomically before the secret is checked (`checks`, the checks in the window: failures and
 * those in flight), so parallel requests get at most `maxFailures` checks; a wrong secret turns
 * its place into a failure, a correct one gives it back. A caller whose places are all held by
 * checks in flight waits for them rather than being refused: a correct secret is refused only
 * after `maxFailures` failures, never for requests still in flight. A window past `expiresAt`
 * counts as absent whether or not TTL has deleted it yet (TTL deletes within days, and dynalite
 * never).
 */
export class DynamoDbAuthenticationThrottle implements AuthenticationThrottle {
  constructor(
    private readonly client: DocumentClient,
    private readonly tableName: string,
    private readonly policy: AuthenticationThrottlePolicy,
  ) {}

  async check(caller: AuthenticationCaller, now: Date): Promise<AuthenticationAttempt & AuthenticationCheck> {
    const started = Date.now();
    for (;;) {
      const at = new Date(now.getTime() + (Date.now() - started));
      const claimed = (await this.claimInWindow(caller, at)) ?? (await this.startWindow(caller, at));
      if (claimed !== undefined) return { allowed: true, ...claimed };
      const { Item } = await this.client.get({
        TableName: this.tableName,
        Key: authenticationFailuresKey(caller),
        ConsistentRead: true,
      });
      const nowSeconds = epochSeconds(at);
      const expiresAt = Number(Item?.[EXPIRES_AT_ATTRIBUTE] ?? 0);
      if (expiresAt <= nowSeconds) continue;
      const failures = Number(Item?.failures ?? 0);
      const retryAfterSeconds = Math.min(expiresAt - nowSeconds, this.policy.windowSeconds);
      if (failures >= this.policy.maxFailures || Date.now() - started >= MAX_WAIT_MS) {
        return { allowed: false, failures, window: expiresAt, retryAfterSeconds };
      }
      // Places held by checks in flight: one is a failure or free again within a derivation.
      await sleep(WAIT_STEP_MS + Math.random() * WAIT_STEP_MS);
    }
  }

  /** One more check in a live window with a place left; undefined when there is none. */
  private async claimInWindow(
    caller: AuthenticationCaller,
    at: Date,
  ): Promise<AuthenticationCheck | undefined> {
    try {
      const { Attributes } = await this.client.update({
        TableName: this.tableName,
        Key: authenticationFailuresKey(caller),
        UpdateExpression: 'SET checks = if_not_exists(checks, failures) + :one',
        ConditionExpression:
          '#expiresAt > :now AND failures < :max AND (checks < :max OR attribute_not_exists(checks))',
        ExpressionAttributeNames: { '#expiresAt': EXPIRES_AT_ATTRIBUTE },
        ExpressionAttributeValues: { ':one': 1, ':now': epochSeconds(at), ':max': this.policy.maxFailures },
        ReturnValues: 'ALL_NEW',
      });
      return {
        failures: Number(Attributes?.failures ?? 0),
        window: Number(Attributes?.[EXPIRES_AT_ATTRIBUTE]),
      };
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }

  /** The first check of a new window, where there is none or it has ended; undefined when one is live. */
  private async startWindow(
    caller: AuthenticationCaller,
    at: Date,
  ): Promise<AuthenticationCheck | undefined> {
    const window = epochSeconds(at) + this.policy.windowSeconds;
    try {
      await this.client.update({
        TableName: this.tableName,
        Key: authenticationFailuresKey(caller),
        UpdateExpression: 'SET checks = :one, failures = :zero, #expiresAt = :end, #type = :type',
        ConditionExpression: 'attribute_not_exists(pk) OR #expiresAt <= :now',
        ExpressionAttributeNames: { '#expiresAt': EXPIRES_AT_ATTRIBUTE, '#type': 'type' },
        ExpressionAttributeValues: {
          ':one': 1,
          ':zero': 0,
          ':now': epochSeconds(at),
          ':end': window,
          ':type': 'AuthenticationFailures',
        },
      });
      return { failures: 0, window };
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }

  /** The check's place becomes a failure; with no live window (it ended meanwhile), it starts one. */
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
          UpdateExpression: 'SET checks = :one, failures = :one, #expiresAt = :end, #type = :type',
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

  /**
   * One counter per address and fixed window, raised by one unconditional ADD: no race to lose,
   * one write per secret check. A burst across a window's edge may get twice the budget.
   */
  async spendAddressBudget(sourceAddress: string, now: Date): Promise<boolean> {
    const window = Math.floor(epochSeconds(now) / this.policy.windowSeconds);
    const { Attributes } = await this.client.update({
      TableName: this.tableName,
      Key: secretCheckBudgetKey(sourceAddress, window),
      UpdateExpression: 'ADD checks :one SET #expiresAt = :end, #type = :type',
      ExpressionAttributeNames: { '#expiresAt': EXPIRES_AT_ATTRIBUTE, '#type': 'type' },
      ExpressionAttributeValues: {
        ':one': 1,
        ':end': (window + 1) * this.policy.windowSeconds,
        ':type': 'SecretCheckBudget',
      },
      ReturnValues: 'UPDATED_NEW',
    });
    return Number(Attributes?.checks) <= this.policy.secretChecksPerAddress;
  }

  /**
   * A correct secret: its place is given back, and the failures it saw are forgiven (the count
   * starts again), in the window it claimed in only.
   */
  async succeeded(caller: AuthenticationCaller, check: AuthenticationCheck): Promise<void> {
    const giveBack = (forgiven: number) =>
      this.client.update({
        TableName: this.tableName,
        Key: authenticationFailuresKey(caller),
        UpdateExpression: 'SET checks = checks - :given, failures = failures - :forgiven',
        ConditionExpression: '#expiresAt = :window AND failures >= :forgiven AND checks >= :given',
        ExpressionAttributeNames: { '#expiresAt': EXPIRES_AT_ATTRIBUTE },
        ExpressionAttributeValues: { ':given': 1 + forgiven, ':forgiven': forgiven, ':window': check.window },
      });
    try {
      await giveBack(check.failures);
      return;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    // Another success forgave the failures first: the place alone is given back.
    try {
      if (check.failures > 0) await giveBack(0);
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
}
