import {
  type EventBridgeClient,
  PutEventsCommand,
  type PutEventsRequestEntry,
} from '@aws-sdk/client-eventbridge';
import { STATUS_CHANGED_EVENT } from '#domain/credit-transfers/lifecycle';
import type { StatusChangedEvent, StatusEventPublisher } from '#domain/credit-transfers/ports';
import type { BatchCompletedEvent, BatchEventPublisher } from '#domain/iso20022/ports';

/** The `source` of every event the service publishes. */
export const EVENT_SOURCE = 'credit-transfers';

/** The `detail-type` of a batch's completion (the webhook event `credit-transfer-batch.completed`). */
export const BATCH_COMPLETED_EVENT = 'CreditTransferBatchCompleted';

/** PutEvents takes at most 10 entries per call. */
const BATCH = 10;

export class EventPublishError extends Error {
  constructor(failed: number) {
    super(`EventBridge refused ${failed} status event(s); the step is retried`);
    this.name = 'EventPublishError';
  }
}

/** Publishes status events on an EventBridge bus; the event id travels in the detail, for deduplication. */
export class EventBridgeStatusEventPublisher implements StatusEventPublisher, BatchEventPublisher {
  constructor(
    private readonly eventBridge: Pick<EventBridgeClient, 'send'>,
    private readonly eventBusName: string,
  ) {}

  async publish(events: readonly StatusChangedEvent[]): Promise<void> {
    for (let start = 0; start < events.length; start += BATCH) {
      const entries: PutEventsRequestEntry[] = events.slice(start, start + BATCH).map((event) => ({
        EventBusName: this.eventBusName,
        Source: EVENT_SOURCE,
        DetailType: STATUS_CHANGED_EVENT,
        Time: new Date(event.date),
        Detail: JSON.stringify(event),
      }));
      const result = await this.eventBridge.send(new PutEventsCommand({ Entries: entries }));
      // PutEvents succeeds as a call even when entries fail; the retried step publishes them again.
      if ((result.FailedEntryCount ?? 0) > 0) throw new EventPublishError(result.FailedEntryCount ?? 0);
    }
  }

  async publishBatchCompleted(event: BatchCompletedEvent): Promise<void> {
    const result = await this.eventBridge.send(
      new PutEventsCommand({
        Entries: [
          {
            EventBusName: this.eventBusName,
            Source: EVENT_SOURCE,
            DetailType: BATCH_COMPLETED_EVENT,
            Time: new Date(event.completedAt),
            Detail: JSON.stringify(event),
          },
        ],
      }),
    );
    if ((result.FailedEntryCount ?? 0) > 0) throw new EventPublishError(result.FailedEntryCount ?? 0);
  }
}

/** The container's EventBridge client (event-bridge-client.ts). */
export { eventBridgeClient } from '../aws/event-bridge-client.ts';
