import type { Clock } from '#domain/commons/ports';
import { STATUS_REASONS } from '#domain/credit-transfers/lifecycle';
import type { ClearingStatus, CustomerProfileCheck, Rail, RailPayment } from '#domain/credit-transfers/ports';
import { optionalEnv } from '#shared/config';
import { type DocumentClient, isConditionFailure } from '../aws/dynamodb-client.ts';
import { sandboxClearingKey } from '../table/keys.ts';

/**
 * The sandbox rail (local and non-production stages): outcomes follow the suffix of
 * debtorAccountId, so a client can try every path. Clearing keeps one record per payment in the
 * service's table (as a real clearing system keeps its own), which makes submission idempotent
 * and decides settlement against a recall by conditional writes: exactly one of them wins.
 */
export interface SandboxRailSettings {
  /** How long clearing takes to settle an ordinary transfer. */
  settlementSeconds: number;
  /** How long a `-hold` transfer stays before settlement, so a cancellation can win. */
  holdSeconds: number;
}

const number = (name: string, fallback: number): number => {
  const value = optionalEnv(name);
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < 0)
    throw new Error(`${name} must be a number of seconds, got ${value}`);
  return parsed;
};

export const sandboxRailSettings = (): SandboxRailSettings => ({
  settlementSeconds: number('SANDBOX_SETTLEMENT_SECONDS', 1),
  holdSeconds: number('SANDBOX_HOLD_SECONDS', 300),
});

/** Suffix of debtorAccountId -> the customer-profile check that refuses it. */
export const SANDBOX_REJECTIONS: Readonly<Record<string, string>> = {
  '-blocked': STATUS_REASONS.blockedAccount,
  '-closed': STATUS_REASONS.closedAccountNumber,
  '-nofunds': STATUS_REASONS.insufficientFunds,
  '-forbidden': STATUS_REASONS.transactionForbidden,
  '-sanctioned': STATUS_REASONS.regulatoryReason,
};
export const SANDBOX_HOLD_SUFFIX = '-hold';

const accountOf = (payment: RailPayment): string => payment.transfer.debtorAccountId.toLowerCase();

export class SandboxRail implements Rail {
  constructor(
    private readonly client: DocumentClient,
    private readonly tableName: string,
    private readonly clock: Clock,
    private readonly settings: SandboxRailSettings = sandboxRailSettings(),
  ) {}

  async checkCustomerProfile(payment: RailPayment): Promise<CustomerProfileCheck> {
    const account = accountOf(payment);
    for (const [suffix, reason] of Object.entries(SANDBOX_REJECTIONS)) {
      if (account.endsWith(suffix)) return { accepted: false, reason };
    }
    return { accepted: true };
  }

  async submit(payment: RailPayment): Promise<void> {
    const now = this.clock.now();
    const seconds = accountOf(payment).endsWith(SANDBOX_HOLD_SUFFIX)
      ? this.settings.holdSeconds
      : this.settings.settlementSeconds;
    // if_not_exists: a second submission of the same payment changes nothing.
    await this.client.update({
      TableName: this.tableName,
      Key: sandboxClearingKey(payment.tenant, payment.paymentId),
      UpdateExpression:
        'SET #type = if_not_exists(#type, :type), submittedAt = if_not_exists(submittedAt, :now), settlesAt = if_not_exists(settlesAt, :settles)',
      ExpressionAttributeNames: { '#type': 'type' },
      ExpressionAttributeValues: {
        ':type': 'SandboxClearing',
        ':now': now.toISOString(),
        ':settles': new Date(now.getTime() + seconds * 1000).toISOString(),
      },
    });
  }

  private async find(payment: RailPayment): Promise<Record<string, unknown> | undefined> {
    const { Item } = await this.client.get({
      TableName: this.tableName,
      Key: sandboxClearingKey(payment.tenant, payment.paymentId),
      ConsistentRead: true,
    });
    return Item;
  }

  private async read(payment: RailPayment): Promise<Record<string, unknown>> {
    const item = await this.find(payment);
    if (!item) throw new Error(`Sandbox clearing has no submission of ${payment.paymentId}`);
    return item;
  }

  async clearingStatus(payment: RailPayment): Promise<ClearingStatus> {
    const now = this.clock.now().toISOString();
    try {
      // Settlement is a write, conditional on no recall: a recall and a settlement never both
      // happen. Tried first, so a payment due to settle costs one call; a settled one stays settled.
      await this.client.update({
        TableName: this.tableName,
        Key: sandboxClearingKey(payment.tenant, payment.paymentId),
        UpdateExpression: 'SET settledAt = if_not_exists(settledAt, :now)',
        ConditionExpression:
          'attribute_exists(pk) AND attribute_not_exists(recalledAt) AND settlesAt <= :now',
        ExpressionAttributeValues: { ':now': now },
      });
      return { state: 'settled' };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    const item = await this.find(payment);
    if (item === undefined) return { state: 'unknown' };
    if (item.recalledAt !== undefined) return { state: 'recalled' };
    return item.settledAt !== undefined ? { state: 'settled' } : { state: 'pending' };
  }

  async recall(payment: RailPayment): Promise<'recalled' | 'settled'> {
    const now = this.clock.now().toISOString();
    try {
      await this.client.update({
        TableName: this.tableName,
        Key: sandboxClearingKey(payment.tenant, payment.paymentId),
        UpdateExpression: 'SET recalledAt = if_not_exists(recalledAt, :now)',
        // Before the settlement time only, and never after a settlement was recorded.
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(settledAt) AND settlesAt > :now',
        ExpressionAttributeValues: { ':now': now },
      });
      return 'recalled';
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return (await this.read(payment)).recalledAt !== undefined ? 'recalled' : 'settled';
    }
  }
}
