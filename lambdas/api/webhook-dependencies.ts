import { documentClient, tableName } from '#adapters/aws/dynamodb-client';
import { systemResolver } from '#adapters/webhooks/webhook-sender';
import { webhookUrlPolicy } from '#adapters/webhooks/webhook-settings';
import { DynamoDbWebhookStore } from '#adapters/webhooks/webhook-store';
import { systemClock } from '#domain/commons/ports';
import type { WebhookEndpointDependencies } from '#domain/webhooks/webhook-endpoints';

let wired: WebhookEndpointDependencies | undefined;

/**
 * The real adapters of the webhook endpoint and events operations, built once per container on
 * first use. The cursor key is not among them: only the list routes are given it (and bundle the
 * KMS client that reads it), in listCursorKey.
 */
export const webhookDependencies = (): WebhookEndpointDependencies => {
  if (wired === undefined) {
    const store = new DynamoDbWebhookStore(documentClient(), tableName());
    wired = {
      endpoints: store.endpoints,
      events: store,
      deliveries: store,
      resolve: systemResolver,
      urlPolicy: webhookUrlPolicy(),
      clock: systemClock,
    };
  }
  return wired;
};
