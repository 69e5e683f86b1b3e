import { isDeepStrictEqual } from 'node:util';
import { toStatusChangedEvent } from '../credit-transfers/lifecycle.ts';
import type { StatusChange, StatusChangedEvent } from '../credit-transfers/ports.ts';

/** A stored transfer's history, as the status events are checked against it. */
export interface TransferHistories {
  /**
   * The history of the tenant's transfer, read strongly consistent (so a change whose event has
   * arrived is in it), or undefined when the tenant has no such transfer.
   */
  history(tenant: string, paymentId: string): Promise<readonly StatusChange[] | undefined>;
}

/** Why a status event was refused; recorded with the drop, never shown to a client. */
export type ForgedReason = 'malformed' | 'unknown-transfer' | 'not-in-history';

/**
 * Whether `event` is exactly the event the workflow publishes for an entry of the stored
 * transfer's history (same id, status, reason, date, actor, previous status and position): only
 * then is it delivered or listed. Anything else on the bus (a transfer that does not exist, in
 * that tenant or at all, or a status it never had at that time) was not put there by the
 * service, and is answered with the reason it is dropped.
 */
export const checkStatusEvent = async (
  histories: TransferHistories,
  event: unknown,
): Promise<{ accepted: true; event: StatusChangedEvent } | { accepted: false; reason: ForgedReason }> => {
  if (!isStatusEventShaped(event)) return { accepted: false, reason: 'malformed' };
  const history = await histories.history(event.tenant, event.paymentId);
  if (history === undefined) return { accepted: false, reason: 'unknown-transfer' };
  const entry = history[event.sequence];
  if (entry === undefined) return { accepted: false, reason: 'not-in-history' };
  const expected = toStatusChangedEvent(
    { tenant: event.tenant, paymentId: event.paymentId, history: [...history] },
    event.sequence,
    entry,
  );
  // Compared as JSON values: the event crossed the bus as JSON, so undefined fields are absent.
  return isDeepStrictEqual(JSON.parse(JSON.stringify(expected)), event)
    ? { accepted: true, event }
    : { accepted: false, reason: 'not-in-history' };
};

const isStatusEventShaped = (value: unknown): value is StatusChangedEvent => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const event = value as Record<string, unknown>;
  return (
    typeof event.tenant === 'string' &&
    typeof event.paymentId === 'string' &&
    event.paymentId !== '' &&
    Number.isSafeInteger(event.sequence) &&
    (event.sequence as number) >= 0
  );
};

/**
 * The histories as one batch of events sees them: each transfer read once for the batch (a
 * settled transfer makes five events, often in one batch). The read starts after the batch
 * arrived, so it holds every change the batch's true events report.
 */
export const historiesOncePerBatch = (histories: TransferHistories): TransferHistories => {
  const read = new Map<string, Promise<readonly StatusChange[] | undefined>>();
  return {
    history: (tenant, paymentId) => {
      const key = `${tenant}\u0000${paymentId}`;
      let history = read.get(key);
      if (history === undefined) {
        history = histories.history(tenant, paymentId);
        read.set(key, history);
        // A failed read is not kept: the next event of the transfer reads again.
        history.catch(() => read.delete(key));
      }
      return history;
    },
  };
};
