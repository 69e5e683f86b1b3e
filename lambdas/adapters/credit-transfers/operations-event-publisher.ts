import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { TRANSFER_PARKED_EVENT } from '#domain/credit-transfers/parked-transfers';
import type { OperationsEventPublisher, TransferParkedEvent } from '#domain/credit-transfers/ports';
import { checkStandInCall } from '../aws/stand-ins.ts';

/** The `source` of events for operators, apart from the transfers' status events (no webhook carries them). */
export const OPERATIONS_EVENT_SOURCE = 'credit-transfers.operations';

/** Identifiers and the parking only: no payment data. */
const detailOf = (event: TransferParkedEvent): TransferParkedEvent => ({
  eventId: event.eventId,
  tenant: event.tenant,
  paymentId: event.paymentId,
  status: event.status,
  parked: { at: event.parked.at, attempts: event.parked.attempts, reason: event.parked.reason },
});

export class EventBridgeOperationsEventPublisher implements OperationsEventPublisher {
  constructor(
    private readonly eventBridge: Pick<EventBridgeClient, 'send'>,
    private readonly eventBusName: string,
  ) {}

  async publishParked(event: TransferParkedEvent): Promise<void> {
    const result = await this.eventBridge.send(
      new PutEventsCommand({
        Entries: [
          {
            EventBusName: this.eventBusName,
            Source: OPERATIONS_EVENT_SOURCE,
            DetailType: TRANSFER_PARKED_EVENT,
            Time: new Date(event.parked.at),
            Detail: JSON.stringify(detailOf(event)),
          },
        ],
      }),
    );
    if ((result.FailedEntryCount ?? 0) > 0) {
      const failed = result.Entries?.[0];
      throw new Error(
        `EventBridge refused the parking event: ${failed?.ErrorCode ?? ''} ${failed?.ErrorMessage ?? ''}`,
      );
    }
  }
}

/** The local bus: an EventBridge-shaped line in the events file, beside the status events. */
export class JsonLinesOperationsEventPublisher implements OperationsEventPublisher {
  constructor(private readonly file: string) {}

  async publishParked(event: TransferParkedEvent): Promise<void> {
    await checkStandInCall({
      action: 'events:PutEvents',
      resource: 'EVENT_BUS_NAME',
      context: { 'events:source': OPERATIONS_EVENT_SOURCE, 'events:detail-type': TRANSFER_PARKED_EVENT },
    });
    const line = JSON.stringify({
      id: event.eventId,
      source: OPERATIONS_EVENT_SOURCE,
      'detail-type': TRANSFER_PARKED_EVENT,
      time: event.parked.at,
      detail: detailOf(event),
    });
    await mkdir(dirname(this.file), { recursive: true });
    // One append of one line: O_APPEND keeps it whole beside the service's own appends.
    await appendFile(this.file, `${line}\n`);
  }
}
