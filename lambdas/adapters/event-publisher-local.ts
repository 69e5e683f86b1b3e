import { appendFile } from 'node:fs/promises';
import { STATUS_CHANGED_EVENT } from '#domain/lifecycle';
import type { StatusChangedEvent, StatusEventPublisher } from '#domain/ports';
import { EVENT_SOURCE } from './event-publisher.ts';

/**
 * The local bus: one JSON line per event (EventBridge's envelope: id, source, detail-type, time,
 * detail) appended to a file under DATA_DIR. Appends are chained, so lines never interleave.
 */
export class JsonLinesStatusEventPublisher implements StatusEventPublisher {
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly file: string) {}

  publish(events: readonly StatusChangedEvent[]): Promise<void> {
    const lines = events
      .map((event) =>
        JSON.stringify({
          id: event.eventId,
          source: EVENT_SOURCE,
          'detail-type': STATUS_CHANGED_EVENT,
          time: event.date,
          detail: event,
        }),
      )
      .join('\n');
    const write = this.tail.then(() => appendFile(this.file, `${lines}\n`));
    this.tail = write.catch(() => undefined);
    return write;
  }
}
