import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { ClientAuditEvent, ClientAuditPublisher } from '#domain/access/ports';

/** The `source` of client administration events, apart from the transfers' own. */
export const CLIENT_AUDIT_EVENT_SOURCE = 'credit-transfers.clients';

/** The event exactly as published: no field of it may ever hold a secret or a hash. */
const detailOf = (event: ClientAuditEvent): ClientAuditEvent => ({
  eventId: event.eventId,
  action: event.action,
  clientId: event.clientId,
  tenant: event.tenant,
  scopes: [...event.scopes],
  actor: event.actor,
  date: event.date,
  ...(event.previousSecretExpiresAt !== undefined && {
    previousSecretExpiresAt: event.previousSecretExpiresAt,
  }),
});

export class EventBridgeClientAuditPublisher implements ClientAuditPublisher {
  constructor(
    private readonly eventBridge: Pick<EventBridgeClient, 'send'>,
    private readonly eventBusName: string,
  ) {}

  async publish(event: ClientAuditEvent): Promise<void> {
    const result = await this.eventBridge.send(
      new PutEventsCommand({
        Entries: [
          {
            EventBusName: this.eventBusName,
            Source: CLIENT_AUDIT_EVENT_SOURCE,
            DetailType: event.action,
            Time: new Date(event.date),
            Detail: JSON.stringify(detailOf(event)),
          },
        ],
      }),
    );
    const failed = result.Entries?.[0];
    if ((result.FailedEntryCount ?? 0) > 0) {
      throw new Error(
        `EventBridge refused the audit event: ${failed?.ErrorCode ?? ''} ${failed?.ErrorMessage ?? ''}`,
      );
    }
  }
}

/** The local bus: the same EventBridge-shaped line the status events get, in the same file. */
export class JsonLinesClientAuditPublisher implements ClientAuditPublisher {
  constructor(private readonly file: string) {}

  async publish(event: ClientAuditEvent): Promise<void> {
    const line = JSON.stringify({
      id: event.eventId,
      source: CLIENT_AUDIT_EVENT_SOURCE,
      'detail-type': event.action,
      time: event.date,
      detail: detailOf(event),
    });
    await mkdir(dirname(this.file), { recursive: true });
    // One append of one line: O_APPEND keeps it whole beside the service's own appends.
    await appendFile(this.file, `${line}\n`);
  }
}
