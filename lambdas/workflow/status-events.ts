import {
  EventBridgeStatusEventPublisher,
  eventBridgeClient,
} from '#adapters/credit-transfers/event-publisher';
import { JsonLinesStatusEventPublisher } from '#adapters/credit-transfers/event-publisher-local';
import {
  EventBridgeOperationsEventPublisher,
  JsonLinesOperationsEventPublisher,
} from '#adapters/credit-transfers/operations-event-publisher';
import type { OperationsEventPublisher, StatusEventPublisher } from '#domain/credit-transfers/ports';
import type { BatchEventPublisher } from '#domain/iso20022/ports';
import { optionalEnv, requiredEnv } from '#shared/config';
import { countingStatusEvents } from '#shared/metrics';

let bus: (StatusEventPublisher & BatchEventPublisher) | undefined;
let publisher: StatusEventPublisher | undefined;

/** The bus itself, one per container: the status and the batch events share it (and locally its file's append chain). */
const statusBus = (): StatusEventPublisher & BatchEventPublisher => {
  const eventsFile = optionalEnv('EVENTS_FILE');
  bus ??=
    eventsFile !== undefined
      ? new JsonLinesStatusEventPublisher(eventsFile)
      : new EventBridgeStatusEventPublisher(eventBridgeClient(), requiredEnv('EVENT_BUS_NAME'));
  return bus;
};

/** Batch completions, on the status events' bus. */
export const batchEventPublisher = (): BatchEventPublisher => statusBus();

/**
 * The status event publisher, built once per container on first use: the EventBridge bus
 * EVENT_BUS_NAME, or the JSON-lines file EVENTS_FILE (local runtime). Rejections and
 * cancellations are counted as their events go out.
 */
export const statusEventPublisher = (): StatusEventPublisher => {
  publisher ??= countingStatusEvents(statusBus());
  return publisher;
};

let operationsPublisher: OperationsEventPublisher | undefined;

/** Events for operators (a transfer parked), on the same bus or file as the status events. */
export const operationsEventPublisher = (): OperationsEventPublisher => {
  const eventsFile = optionalEnv('EVENTS_FILE');
  operationsPublisher ??=
    eventsFile !== undefined
      ? new JsonLinesOperationsEventPublisher(eventsFile)
      : new EventBridgeOperationsEventPublisher(eventBridgeClient(), requiredEnv('EVENT_BUS_NAME'));
  return operationsPublisher;
};
