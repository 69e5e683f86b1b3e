import { cursorKeyFromEnvironment } from '#adapters/cursor-key';
import { documentClient, tableName } from '#adapters/dynamodb-client';
import { systemResolver } from '#adapters/webhook-sender';
import { webhookUrlPolicy } from '#adapters/webhook-settings';
import { DynamoDbWebhookStore } from '#adapters/webhook-store';
import type { ListEventsDependencies } from '#domain/list-events';
import { systemClock } from '#domain/ports';
import type { WebhookEndpointDependencies } from '#domain/webhook-endpoints';

let wired: WebhookEndpointDependencies | undefined;

/** The real adapters of the webhook endpoint and events operations, built once per container on first use. */
export const webhookDependencies = (): WebhookEndpointDependencies & ListEventsDependencies => {
  if (wired === undefined) {
    const store = new DynamoDbWebhookStore(documentClient(), tableName());
    wired = {
      endpoints: store.endpoints,
      events: store,
      deliveries: store,
      resolve: systemResolver,
      urlPolicy: webhookUrlPolicy(),
      // Read at first use: only the list operations are given a cursor key.
      cursorKey: () => cursorKeyFromEnvironment()(),
      clock: systemClock,
    };
  }
  return wired;
};
