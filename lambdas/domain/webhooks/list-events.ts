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
 * GET /v1/events: the tenant's events, oldest first, each exactly the body its deliveries send,
 * once they are older than the settle horizon (EVENT_SETTLE_MS).
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
  const page = await events.page({
    tenant,
    ...(filters.type !== undefined && { type: filters.type }),
    ...(filters['paymentId.eq'] !== undefined && { paymentId: filters['paymentId.eq'] }),
    ...(filters['createdAt.gte'] !== undefined && {
      createdAtFrom: new Date(filters['createdAt.gte']).toISOString(),
    }),
    ...(after !== undefined && { after }),
    // Only settled events: one written late, earlier in the order, is never paged past.
    createdBefore: new Date(now.getTime() - EVENT_SETTLE_MS).toISOString(),
    limit: limitOf(limit),
    now,
  });
  return {
    bodies: page.events.map((event) => event.body),
    nextCursor:
      page.next === undefined
        ? ''
        : signPositionCursor(await cursorKey(), LIST, tenant, page.next, filtersKey),
  };
};
