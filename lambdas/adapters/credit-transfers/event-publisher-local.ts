import { appendFileSync, closeSync, fstatSync, fsyncSync, ftruncateSync, openSync, readSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import { STATUS_CHANGED_EVENT } from '#domain/credit-transfers/lifecycle';
import type { StatusChangedEvent, StatusEventPublisher } from '#domain/credit-transfers/ports';
import type { BatchCompletedEvent, BatchEventPublisher } from '#domain/iso20022/ports';
import { checkStandInCall } from '../aws/stand-ins.ts';
import { BATCH_COMPLETED_EVENT, EVENT_SOURCE } from './event-publisher.ts';

/** The longest last line looked at for tearing; an event line is a few hundred bytes. */
const TAIL_BYTES = 1 << 20;

const isJsonLine = (line: string): boolean => {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
};

/**
 * A crash mid-append can leave the file's last line torn (no newline, or not JSON). Left in place,
 * the next event would be appended to it and lost with it. The torn bytes are appended to
 * `<file>.torn` (kept for inspection, never overwritten) and cut from the file, which then holds
 * whole lines only. Answers how many bytes were moved (0 when the file was whole or absent).
 */
export const setAsideTornTail = (file: string): number => {
  let fd: number;
  try {
    fd = openSync(file, 'r+');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return 0;
    const start = Math.max(0, size - TAIL_BYTES);
    const tail = Buffer.alloc(size - start);
    readSync(fd, tail, 0, tail.length, start);
    const endsWhole = tail[tail.length - 1] === 0x0a;
    // The last complete line ends at the last newline; with a whole file, the one before it.
    const lastNewline = tail.lastIndexOf(0x0a, endsWhole ? tail.length - 2 : tail.length - 1);
    const lineStart = lastNewline + 1;
    const lastLine = tail.subarray(lineStart, endsWhole ? tail.length - 1 : tail.length).toString('utf8');
    if (endsWhole && isJsonLine(lastLine)) return 0;
    const cut = start + lineStart;
    const torn = tail.subarray(lineStart);
    appendFileSync(`${file}.torn`, endsWhole ? torn : Buffer.concat([torn, Buffer.from('\n')]), {
      mode: 0o600,
    });
    ftruncateSync(fd, cut);
    fsyncSync(fd);
    return torn.length;
  } finally {
    closeSync(fd);
  }
};

/**
 * The local bus: one JSON line per event (EventBridge's envelope: id, source, detail-type, time,
 * detail) appended to a file under DATA_DIR. Appends are chained, so lines never interleave, and
 * each batch is one write of whole lines; a line torn by a crash is set aside at the next start.
 */
export class JsonLinesStatusEventPublisher implements StatusEventPublisher, BatchEventPublisher {
  private tail: Promise<void> = Promise.resolve();
  /** A write failed: it may have left part of a line behind, set aside before the next append. */
  private mayBeTorn = false;

  constructor(private readonly file: string) {}

  publish(events: readonly StatusChangedEvent[]): Promise<void> {
    return this.append(
      STATUS_CHANGED_EVENT,
      events.map((event) => ({ id: event.eventId, time: event.date, detail: event })),
    );
  }

  publishBatchCompleted(event: BatchCompletedEvent): Promise<void> {
    return this.append(BATCH_COMPLETED_EVENT, [
      { id: event.eventId, time: event.completedAt, detail: event },
    ]);
  }

  private append(
    detailType: string,
    events: readonly { id: string; time: string; detail: unknown }[],
  ): Promise<void> {
    const lines = events
      .map((event) =>
        JSON.stringify({
          id: event.id,
          source: EVENT_SOURCE,
          'detail-type': detailType,
          time: event.time,
          detail: event.detail,
        }),
      )
      .join('\n');
    // One buffer, one append; after a failed one the torn part is set aside first, so no event is
    // ever glued to half of another.
    const write = this.tail.then(async () => {
      // The file stands in for the bus: the PutEvents is checked first, as AWS checks it (in the
      // chain, so appends keep the order of the calls).
      await checkStandInCall({
        action: 'events:PutEvents',
        resource: 'EVENT_BUS_NAME',
        context: { 'events:source': EVENT_SOURCE, 'events:detail-type': detailType },
      });
      if (this.mayBeTorn) setAsideTornTail(this.file);
      this.mayBeTorn = false;
      try {
        await appendFile(this.file, Buffer.from(`${lines}\n`));
      } catch (error) {
        this.mayBeTorn = true;
        throw error;
      }
    });
    this.tail = write.catch(() => undefined);
    return write;
  }
}
