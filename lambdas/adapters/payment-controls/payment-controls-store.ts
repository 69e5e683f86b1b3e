import type { PaymentControls } from '#domain/payment-controls/payment-controls';
import type { PaymentControlsStore, PaymentControlsVersion } from '#domain/payment-controls/ports';
import { type DocumentClient, isConditionFailure } from '../aws/dynamodb-client.ts';
import {
  PAYMENT_CONTROLS_VERSION_PREFIX,
  paymentControlsPartition,
  paymentControlsVersionKey,
} from '../table/keys.ts';

type Item = Record<string, unknown>;

const versionOfItem = (item: Item): PaymentControlsVersion => ({
  version: item.version as number,
  controls: item.controls as PaymentControls,
  clientId: item.clientId as string,
  createdAt: item.createdAt as string,
});

/** Payment controls in the table: each version an item of its own, claimed by a conditional put. */
export class DynamoDbPaymentControlsStore implements PaymentControlsStore {
  constructor(
    private readonly client: DocumentClient,
    private readonly table: string,
  ) {}

  async current(tenant: string): Promise<PaymentControlsVersion | undefined> {
    const [newest] = await this.list(tenant, { limit: 1 });
    return newest;
  }

  async add(tenant: string, version: PaymentControlsVersion): Promise<boolean> {
    try {
      await this.client.put({
        TableName: this.table,
        Item: { ...paymentControlsVersionKey(tenant, version.version), tenant, ...version },
        ConditionExpression: 'attribute_not_exists(pk)',
      });
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async list(tenant: string, options: { before?: number; limit: number }): Promise<PaymentControlsVersion[]> {
    const below =
      options.before === undefined ? undefined : paymentControlsVersionKey(tenant, options.before).sk;
    const answer = await this.client.query({
      TableName: this.table,
      // Strongly consistent: a change answered a moment ago is the current document.
      ConsistentRead: true,
      KeyConditionExpression:
        below === undefined
          ? 'pk = :pk AND begins_with(sk, :prefix)'
          : 'pk = :pk AND sk BETWEEN :prefix AND :below',
      ExpressionAttributeValues: {
        ':pk': paymentControlsPartition(tenant),
        ':prefix': PAYMENT_CONTROLS_VERSION_PREFIX,
        ...(below !== undefined && { ':below': below }),
      },
      ScanIndexForward: false,
      Limit: options.limit + 1,
    });
    return (answer.Items ?? [])
      .map(versionOfItem)
      .filter((entry) => options.before === undefined || entry.version < options.before)
      .slice(0, options.limit);
  }
}
