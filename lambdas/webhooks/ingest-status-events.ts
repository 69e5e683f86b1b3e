import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { BATCH_COMPLETED_EVENT } from '#adapters/credit-transfers/event-publisher';
import { historiesOncePerBatch } from '#domain/webhooks/status-event-check';
import {
  endpointsOncePerBatch,
  makeFirstDeliveries,
  type RecordedEvent,
  recordBatchCompletedFromBus,
  recordStatusEventFromBus,
} from '#domain/webhooks/webhook-delivery';
import { DEFAULT_DISPATCHER_LIMITS, DeliveryDispatcher } from '#domain/webhooks/webhook-dispatcher';
import { logger } from '#shared/logger';
import { countStatusEventForged, countWebhookEndpointDisabled } from '#shared/metrics';
import { observed } from '#shared/observability';
import {
  completedBatches,
  deliveryDependencies,
  transferApprovals,
  transferHistories,
} from './dependencies.ts';

/** The EventBridge event as the rule puts it in the queue. */
interface StatusEventMessage {
  id: string;
  'detail-type'?: string;
  /** Checked against the table before anything is done with it: the bus carries what anyone put there. */
  detail: unknown;
}

/**
 * The delivery queue's consumer: each message is a status event from the bus. Unless the table
 * holds that change of that tenant's transfer (then it is dropped and counted), it is recorded
 * (the webhook event kept) and its first deliveries are made at once: each delivered, or queued in
 * the table for its retry (which the scheduled delivery function sends), before the message is
 * acknowledged. A message that fails is reported alone (partial batch failure) and comes back;
 * a delivery of its event with neither a first attempt recorded nor a queued delivery is queued then.
 */
export const ingestStatusEvents = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const deps = {
    ...deliveryDependencies(),
    onEndpointDisabled: () => countWebhookEndpointDisabled(),
  };
  const recording = {
    ...deps,
    endpoints: endpointsOncePerBatch(deps.endpoints),
    histories: historiesOncePerBatch(transferHistories()),
    approvals: transferApprovals(),
    batches: completedBatches(),
    onForged: forgedStatusEvent,
  };
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  const recorded: { messageId: string; event: RecordedEvent }[] = [];
  for (const record of event.Records) {
    try {
      const message = JSON.parse(record.body) as StatusEventMessage;
      const kept =
        message['detail-type'] === BATCH_COMPLETED_EVENT
          ? await recordBatchCompletedFromBus(recording, message.detail)
          : await recordStatusEventFromBus(recording, message.detail);
      if (kept !== undefined) recorded.push({ messageId: record.messageId, event: kept });
    } catch (error) {
      logger.error('A status event could not be recorded for webhooks; it is retried', {
        messageId: record.messageId,
        error: error as Error,
      });
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  const dispatcher = new DeliveryDispatcher(deps, DEFAULT_DISPATCHER_LIMITS, {
    onError: (error, delivery) =>
      logger.warn('A webhook attempt failed', { eventId: delivery.eventId, error: error as Error }),
  });
  await Promise.all(
    recorded.map(async ({ messageId, event: kept }) => {
      try {
        await makeFirstDeliveries(deps, dispatcher, kept);
      } catch (error) {
        logger.error('First deliveries of a webhook event could be neither made nor queued; it is retried', {
          messageId,
          eventId: kept.eventId,
          error: error as Error,
        });
        failures.push({ itemIdentifier: messageId });
      }
    }),
  );
  // Queued by a second recording (the first stopped part way): the pool's room goes to them now,
  // the rest of their turn comes with the scheduled function.
  dispatcher.offer(recorded.flatMap(({ event: kept }) => kept.queued));
  await dispatcher.idle();
  return { batchItemFailures: failures };
};

/** A dropped event is acknowledged (it would be dropped again), logged and counted: the count is alarmed. */
const forgedStatusEvent = (event: unknown, reason: string): void => {
  const { tenant, paymentId, sequence, status } = (event ?? {}) as Record<string, unknown>;
  logger.warn('A status event that is no change of a stored transfer was dropped', {
    reason,
    tenant,
    paymentId,
    sequence,
    status,
  });
  countStatusEventForged();
};

export const handler = observed(ingestStatusEvents);
