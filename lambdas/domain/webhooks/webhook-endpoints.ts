import * as z from 'zod/mini';
import { fingerprint } from '../commons/canonical-json.ts';
import { InvalidRequestError, NotFoundError, WebhookConflictError } from '../commons/errors.ts';
import type { Clock } from '../commons/ports.ts';
import { signPositionCursor, verifyPositionCursor } from '../commons/position-cursor.ts';
import { limitOf, pagingParameters, parseQuery } from '../commons/query-parameters.ts';
import { parseOrThrow } from '../commons/validation.ts';
import type { WebhookDeliveryStore, WebhookEndpointStore, WebhookEventStore } from './ports.ts';
import {
  createWebhookEndpointRequestSchema,
  type DeliveryAttempt,
  MAX_ENDPOINTS_PER_TENANT,
  newEndpointId,
  newSigningSecret,
  receivesType,
  redeliveryRequestSchema,
  type SecretSealer,
  toWebhookEndpoint,
  WEBHOOK_ENDPOINT_ID_PATTERN,
  type WebhookEndpoint,
  type WebhookEndpointRecord,
  withRotatedSecret,
} from './webhook-endpoint.ts';
import { WEBHOOK_EVENT_TYPES } from './webhook-event.ts';
import { checkWebhookUrl, type HostResolver, type WebhookUrlPolicy } from './webhook-url.ts';

/** The webhook endpoint operations (scope webhooks:manage). */
export interface WebhookEndpointDependencies {
  endpoints: WebhookEndpointStore;
  events: WebhookEventStore;
  deliveries: WebhookDeliveryStore;
  resolve: HostResolver;
  urlPolicy: WebhookUrlPolicy;
  clock: Clock;
}

/** Seals new signing secrets: only creation and rotation are given one. */
type Sealing = { sealer: SecretSealer };

const notFound = () => new NotFoundError('No webhook endpoint with this id');

/** The caller's endpoint: an unknown id, a malformed one and another tenant's all answer 404 alike. */
const endpointOf = async (
  endpoints: WebhookEndpointStore,
  tenant: string,
  id: string | undefined,
): Promise<WebhookEndpointRecord> => {
  if (id === undefined || !WEBHOOK_ENDPOINT_ID_PATTERN.test(id)) throw notFound();
  const endpoint = await endpoints.get(tenant, id);
  if (endpoint === undefined) throw notFound();
  return endpoint;
};

export const createWebhookEndpoint = async (
  deps: WebhookEndpointDependencies & Sealing,
  tenant: string,
  body: unknown,
): Promise<WebhookEndpoint & { secret: string }> => {
  const request = parseOrThrow(createWebhookEndpointRequestSchema, body, 'The webhook endpoint is not valid');
  const url = await checkWebhookUrl(request.url, deps.urlPolicy, deps.resolve);
  const now = deps.clock.now();
  const secret = newSigningSecret();
  const id = newEndpointId(now);
  const record: WebhookEndpointRecord = {
    tenant,
    id,
    url: url.href,
    ...(request.description !== undefined && { description: request.description }),
    eventTypes: request.eventTypes ?? [...WEBHOOK_EVENT_TYPES],
    status: 'enabled',
    createdAt: now.toISOString(),
    secrets: [
      { sealed: await deps.sealer.seal(secret, { tenant, endpointId: id }), createdAt: now.toISOString() },
    ],
    revision: 1,
  };
  if (!(await deps.endpoints.create(record, MAX_ENDPOINTS_PER_TENANT))) {
    throw new WebhookConflictError(
      'too_many_webhook_endpoints',
      `A client registers at most ${MAX_ENDPOINTS_PER_TENANT} webhook endpoints; delete one first`,
    );
  }
  return { ...toWebhookEndpoint(record), secret };
};

export const listWebhookEndpointsQuerySchema = z.strictObject(pagingParameters('webhook endpoints'));

export const listWebhookEndpoints = async (
  deps: Pick<WebhookEndpointDependencies, 'endpoints'> & { cursorKey: () => Promise<Uint8Array> },
  tenant: string,
  parameters: Readonly<Record<string, readonly string[]>>,
): Promise<{ endpoints: WebhookEndpoint[]; nextCursor: string }> => {
  const { cursor, limit } = parseQuery(listWebhookEndpointsQuerySchema, parameters);
  const filters = fingerprint({}).slice(0, 22);
  const after =
    cursor === undefined
      ? undefined
      : verifyPositionCursor(await deps.cursorKey(), 'webhook-endpoints', tenant, cursor, filters);
  const page = await deps.endpoints.page(tenant, after, limitOf(limit));
  return {
    endpoints: page.endpoints.map(toWebhookEndpoint),
    nextCursor:
      page.next === undefined
        ? ''
        : signPositionCursor(await deps.cursorKey(), 'webhook-endpoints', tenant, page.next, filters),
  };
};

export const getWebhookEndpoint = async (
  deps: Pick<WebhookEndpointDependencies, 'endpoints'>,
  tenant: string,
  id: string | undefined,
): Promise<WebhookEndpoint> => toWebhookEndpoint(await endpointOf(deps.endpoints, tenant, id));

/** Deliveries still queued for it are dropped when their turn comes. */
export const deleteWebhookEndpoint = async (
  deps: Pick<WebhookEndpointDependencies, 'endpoints'>,
  tenant: string,
  id: string | undefined,
): Promise<void> => {
  await endpointOf(deps.endpoints, tenant, id);
  if (!(await deps.endpoints.delete(tenant, id as string))) throw notFound();
};

/** Conditional writes meet a concurrent change at most a few times before one wins. */
const ROTATION_ROUNDS = 5;

export const rotateWebhookSecret = async (
  deps: Pick<WebhookEndpointDependencies, 'endpoints' | 'clock'> & Sealing,
  tenant: string,
  id: string | undefined,
): Promise<WebhookEndpoint & { secret: string; previousSecretExpiresAt: string }> => {
  for (let round = 0; round < ROTATION_ROUNDS; round++) {
    const current = await endpointOf(deps.endpoints, tenant, id);
    const secret = newSigningSecret();
    const sealed = await deps.sealer.seal(secret, { tenant, endpointId: current.id });
    const { endpoint, previousSecretExpiresAt } = withRotatedSecret(current, sealed, deps.clock.now());
    if (await deps.endpoints.replace(endpoint, current.revision)) {
      return { ...toWebhookEndpoint(endpoint), secret, previousSecretExpiresAt };
    }
  }
  throw new Error('The webhook endpoint kept changing during the secret rotation');
};

export const listWebhookDeliveriesQuerySchema = z.strictObject({
  limit: pagingParameters('delivery attempts').limit,
});

export const listWebhookDeliveries = async (
  deps: Pick<WebhookEndpointDependencies, 'endpoints' | 'deliveries'>,
  tenant: string,
  id: string | undefined,
  parameters: Readonly<Record<string, readonly string[]>>,
): Promise<DeliveryAttempt[]> => {
  const { limit } = parseQuery(listWebhookDeliveriesQuerySchema, parameters);
  const endpoint = await endpointOf(deps.endpoints, tenant, id);
  return deps.deliveries.attempts(tenant, endpoint.id, limitOf(limit));
};

/** Past `now`, for events whose writer's clock runs a little ahead of this one. */
const RECORDED_SO_FAR_MARGIN_MS = 60_000;

/** Events one redelivery request queues at most; `nextSince` says where to go on. */
export const MAX_REDELIVERIES_PER_REQUEST = 1000;

export const redeliverWebhookEvents = async (
  deps: Pick<WebhookEndpointDependencies, 'endpoints' | 'events' | 'deliveries' | 'clock'>,
  tenant: string,
  id: string | undefined,
  body: unknown,
): Promise<{ queued: number; nextSince?: string }> => {
  const request = parseOrThrow(redeliveryRequestSchema, body, 'The redelivery request is not valid');
  const endpoint = await endpointOf(deps.endpoints, tenant, id);
  if (endpoint.status !== 'enabled') {
    throw new WebhookConflictError(
      'webhook_endpoint_disabled',
      'The webhook endpoint is disabled: it receives nothing',
    );
  }
  const now = deps.clock.now();
  const queue = (eventId: string) =>
    deps.deliveries.queue({ tenant, endpointId: endpoint.id, eventId }, now, true);

  if (request.eventId !== undefined) {
    const event = await deps.events.get(tenant, request.eventId, now);
    if (event === undefined) throw new NotFoundError('No event with this id');
    if (!receivesType(endpoint, event.type)) {
      throw new InvalidRequestError('The redelivery request is not valid', [
        { name: 'eventId', reason: `is of type ${event.type}, which the endpoint does not receive` },
      ]);
    }
    await queue(event.id);
    return { queued: 1 };
  }

  let queued = 0;
  let after: string | undefined;
  do {
    const page = await deps.events.page({
      tenant,
      createdAtFrom: new Date(request.since as string).toISOString(),
      // Every event recorded so far, unsettled ones too (no settle horizon as the events list has):
      // one recorded while this runs was queued for this endpoint when it was recorded.
      createdBefore: new Date(now.getTime() + RECORDED_SO_FAR_MARGIN_MS).toISOString(),
      ...(after !== undefined && { after }),
      limit: 100,
      now,
    });
    for (const event of page.events) {
      if (queued === MAX_REDELIVERIES_PER_REQUEST) return { queued, nextSince: event.createdAt };
      if (receivesType(endpoint, event.type)) {
        await queue(event.id);
        queued++;
      }
    }
    after = page.next;
  } while (after !== undefined);
  return { queued };
};
