import * as z from 'zod/mini';
import { fingerprint } from '../commons/canonical-json.ts';
import type { Clock } from '../commons/ports.ts';
import { signPositionCursor, verifyPositionCursor } from '../commons/position-cursor.ts';
import { limitOf, pagingParameters, parseQuery } from '../commons/query-parameters.ts';
import { optionalField } from '../commons/text.ts';
import { paymentIdSchema } from '../credit-transfers/credit-transfer.ts';
import type { WebhookEventStore } from './ports.ts';
import { EVENT_SETTLE_MS, isoTimestamp, WEBHOOK_EVENT_TYPES } from './webhook-event.ts';

/**
 * GET /v1/events: the tenant's events, oldest first, each exactly the body its deliveries send.
 * Events older than the settle horizon (EVENT_SETTLE_MS) come first; once they run out, the page
 * shows the recent ones too. The cursor handed back never moves past the horizon: an event
 * written late, earlier in the order than a recent one shown, is still ahead of it (and a recent
 * event may be shown again: consumers dedupe by id).
 */
export const listEventsQuerySchema = z.strictObject({
  type: optionalField(z.enum(WEBHOOK_EVENT_TYPES), 'Only events of this type.'),
  'paymentId.eq': optionalField(
    paymentIdSchema,
    'Only events about the credit transfer with this paymentId.',
  ),
  'createdAt.gte': optionalField(
    isoTimestamp(),
    'Only events recorded at or after this time (ISO 8601, UTC).',
  ),
  ...pagingParameters('events'),
});

export interface ListEventsDependencies {
  events: WebhookEventStore;
  cursorKey: () => Promise<Uint8Array>;
  clock: Clock;
}

export interface EventsPage {
  /** The events' bodies, as JSON text, oldest first. */
  bodies: string[];
  /** Pagination-Cursor: empty on the last page. */
  nextCursor: string;
}

const LIST = 'events';

export const listEvents = async (
  { events, cursorKey, clock }: ListEventsDependencies,
  tenant: string,
  parameters: Readonly<Record<string, readonly string[]>>,
): Promise<EventsPage> => {
  const { cursor, limit, ...filters } = parseQuery(listEventsQuerySchema, parameters);
  const filtersKey = fingerprint(filters).slice(0, 22);
  const after =
    cursor === undefined
      ? undefined
      : verifyPositionCursor(await cursorKey(), LIST, tenant, cursor, filtersKey);
  const now = clock.now();
  const horizon = new Date(now.getTime() - EVENT_SETTLE_MS).toISOString();
  const createdAtFrom =
    filters['createdAt.gte'] === undefined ? undefined : new Date(filters['createdAt.gte']).toISOString();
  const request = {
    tenant,
    ...(filters.type !== undefined && { type: filters.type }),
    ...(filters['paymentId.eq'] !== undefined && { paymentId: filters['paymentId.eq'] }),
    now,
  };
  const pageLimit = limitOf(limit);
  const cursorAt = async (position: string) =>
    signPositionCursor(await cursorKey(), LIST, tenant, position, filtersKey);
  const settled = await events.page({
    ...request,
    ...(createdAtFrom !== undefined && { createdAtFrom }),
    ...(after !== undefined && { after }),
    // Settled events first: every event recorded before the horizon is there to be read.
    createdBefore: horizon,
    limit: pageLimit,
  });
  if (settled.next !== undefined) {
    return { bodies: settled.events.map((event) => event.body), nextCursor: await cursorAt(settled.next) };
  }
  // Every settled event is read: the cursor can go on from the horizon, and no further.
  const fromHorizon = createdAtFrom !== undefined && createdAtFrom > horizon ? createdAtFrom : horizon;
  const room = pageLimit - settled.events.length;
  const recent =
    room === 0
      ? []
      : (
          await events.page({
            ...request,
            createdAtFrom: fromHorizon,
            createdBefore: new Date(now.getTime() + RECENT_CLOCK_MARGIN_MS).toISOString(),
            limit: room,
          })
        ).events;
  const bodies = [...settled.events, ...recent].map((event) => event.body);
  // A full page may have more behind it, and recent events are not settled yet: either way the
  // reader comes back from the horizon. Otherwise this page ends the list.
  return { bodies, nextCursor: room === 0 || recent.length > 0 ? await cursorAt(fromHorizon) : '' };
};

/** How far ahead of this clock a recent event's createdAt may be (another function's clock). */
const RECENT_CLOCK_MARGIN_MS = 60_000;
