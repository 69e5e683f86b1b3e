import { documentClient, tableName } from '#adapters/dynamodb-client';
import { HttpWebhookSender } from '#adapters/webhook-sender';
import { webhookRetryPolicy, webhookUrlPolicy } from '#adapters/webhook-settings';
import { DynamoDbWebhookStore } from '#adapters/webhook-store';
import { systemClock } from '#domain/ports';
import type { DeliveryDependencies } from '#domain/webhook-delivery';

let wired: DeliveryDependencies | undefined;

/** The real adapters of webhook delivery, built once per container (or local process) on first use. */
export const deliveryDependencies = (): DeliveryDependencies => {
  if (wired === undefined) {
    const store = new DynamoDbWebhookStore(documentClient(), tableName());
    wired = {
      endpoints: store.endpoints,
      events: store,
      deliveries: store,
      sender: new HttpWebhookSender(),
      clock: systemClock,
      policy: webhookRetryPolicy(),
      urlPolicy: webhookUrlPolicy(),
    };
  }
  return wired;
};
