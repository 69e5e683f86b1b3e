import { documentClient, tableName } from '#adapters/aws/dynamodb-client';
import { DynamoDbCompletedBatches } from '#adapters/webhooks/completed-batches';
import { SqsDeliveryWaker } from '#adapters/webhooks/delivery-waker';
import { DynamoDbTransferHistories } from '#adapters/webhooks/transfer-histories';
import { webhookSecrets } from '#adapters/webhooks/webhook-secrets';
import { HttpWebhookSender } from '#adapters/webhooks/webhook-sender';
import { webhookRetryPolicy, webhookUrlPolicy } from '#adapters/webhooks/webhook-settings';
import { DynamoDbWebhookStore } from '#adapters/webhooks/webhook-store';
import { systemClock } from '#domain/commons/ports';
import type { TransferHistories } from '#domain/webhooks/status-event-check';
import type {
  CompletedBatches,
  DeliveryDependencies,
  TransferApprovals,
} from '#domain/webhooks/webhook-delivery';
import { optionalEnv } from '#shared/config';

let wired: DeliveryDependencies | undefined;
let histories: DynamoDbTransferHistories | undefined;
const storedTransfers = (): DynamoDbTransferHistories => {
  histories ??= new DynamoDbTransferHistories(documentClient(), tableName());
  return histories;
};

/** The stored transfers' histories, which every status event from the bus is checked against. */
export const transferHistories = (): TransferHistories => storedTransfers();

/** The stored transfers' approvals, which a change to or from Pending is told with. */
export const transferApprovals = (): TransferApprovals => storedTransfers();

let batches: CompletedBatches | undefined;

/** The completed batches, which every batch completion from the bus is checked against. */
export const completedBatches = (): CompletedBatches => {
  batches ??= new DynamoDbCompletedBatches(documentClient(), tableName());
  return batches;
};

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
      // Made at the first secret opened: a function that signs nothing needs no key.
      secrets: { open: (sealed, context) => webhookSecrets().open(sealed, context) },
    };
    // On AWS a queue wakes the retry sender; locally the delivery worker looks at the table itself.
    const wakeUps = optionalEnv('WEBHOOK_WAKE_UP_QUEUE_URL');
    if (wakeUps !== undefined) wired.waker = new SqsDeliveryWaker(wakeUps);
  }
  return wired;
};
