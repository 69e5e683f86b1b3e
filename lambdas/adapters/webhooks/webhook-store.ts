import { TENANT_ID_PATTERN } from '#domain/access/client';
import type { StatusChange } from '#domain/credit-transfers/ports';
import type {
  EventPageRequest,
  PendingDelivery,
  WebhookDeliveryStore,
  WebhookEndpointStore,
  WebhookEventStore,
} from '#domain/webhooks/ports';
import type { DeliveryAttempt, WebhookEndpointRecord } from '#domain/webhooks/webhook-endpoint';
import {
  EVENT_WRITE_LIMIT_MS,
  eventIdsOfHistory,
  type WebhookEventRecord,
  type WebhookEventType,
} from '#domain/webhooks/webhook-event';
import { invocationDeadline, withInvocationDeadline } from '#shared/deadline';
import { type DocumentClient, isConditionFailure } from '../aws/dynamodb-client.ts';
import {
  creditTransferKey,
  eventOrder,
  eventsIndexKey,
  LEGACY_WEBHOOK_DUE_SHARDS,
  legacyWebhookDueShardKey,
  WEBHOOK_DUE_QUEUES,
  webhookAttemptKey,
  webhookDeliveryKey,
  webhookDueKey,
  webhookEndpointAllocationKey,
  webhookEndpointKey,
  webhookEventKey,
  webhookQueueMarkerKey,
  webhookQueueOrder,
} from '../table/keys.ts';
import { TIME_TO_LIVE_ATTRIBUTE, WEBHOOK_INDEX } from '../table/table-definition.ts';

type Item = Record<string, unknown>;

/** Attempts are shown for this long, then TTL removes them. */
const ATTEMPT_RETENTION_SECONDS = 30 * 86_400;
/** A finished delivery is kept this long (what was delivered), then TTL removes it. */
const DELIVERY_RETENTION_SECONDS = 30 * 86_400;
/** Reads one events page makes at most when filters drop events, before it answers with what it has. */
const MAX_EVENT_QUERIES = 5;

const epochSeconds = (date: Date): number => Math.floor(date.getTime() / 1000);

/** Endpoint queues one look at the delivery queue reads at most, besides the markers. */
export const QUEUES_PER_LOOK = 24;
/** Deliveries read from one endpoint's queue per look (an endpoint takes a few attempts at once). */
const QUEUE_READ = 8;
/** Pages of queue markers one look reads at most (a page holds thousands). */
const MAX_MARKER_PAGES = 4;
/** How long a process trusts the queue marker it wrote (see markQueued). */
const MARK_REFRESH_MS = 60_000;
/** How long a marker stands after its last write, whatever its queue holds (see sweepMarker). */
const MARKER_IDLE_MS = 5 * 60_000;
/** A marker out of the index is kept this long (a queue often fills again), then TTL removes it. */
const MARKER_RETENTION_SECONDS = 86_400;
/** How long a queue seen with nothing due is passed over at most. */
const QUIET_MAX_MS = 5_000;

const pendingOfItem = (item: Item): PendingDelivery => ({
  tenant: item.tenant as string,
  endpointId: item.endpointId as string,
  eventId: item.eventId as string,
  attempts: item.attempts as number,
  dueAt: item[WEBHOOK_INDEX.sortKey] as string,
});

/**
 * The queues in turns: one of each tenant's, then the next of each, starting `turn` tenants on
 * (and `turn` endpoints on within each tenant), so successive looks start elsewhere.
 */
export const queuesInTurns = <Q extends { tenant: string }>(queues: readonly Q[], turn: number): Q[] => {
  const byTenant = new Map<string, Q[]>();
  for (const queue of queues) {
    const own = byTenant.get(queue.tenant);
    if (own) own.push(queue);
    else byTenant.set(queue.tenant, [queue]);
  }
  const rotate = <T>(items: readonly T[]): T[] => {
    const by = turn % Math.max(1, items.length);
    return [...items.slice(by), ...items.slice(0, by)];
  };
  const tenants = rotate([...byTenant.values()]).map(rotate);
  const ordered: Q[] = [];
  for (let index = 0; ordered.length < queues.length; index++) {
    for (const own of tenants) if (index < own.length) ordered.push(own[index] as Q);
  }
  return ordered;
};

/**
 * An allocated id with no endpoint after this long was left by a creation or deletion that stopped
 * between its two writes, and is released when the tenant is at its limit.
 */
const STRAY_ALLOCATION_MS = 60_000;
/** Rounds of a creation: seeding the allocation, releasing strays, and a concurrent change each cost one. */
const ALLOCATION_ROUNDS = 4;

/**
 * Runs a table call with its deadline (the SDK aborts it then, see aws-clients.ts) at most
 * EVENT_WRITE_LIMIT_MS away, or the invocation's if sooner: the events list's settle horizon
 * relies on it.
 */
const withinEventWriteLimit = <T>(call: () => Promise<T>): Promise<T> => {
  const limitMs = Math.min(
    EVENT_WRITE_LIMIT_MS,
    (invocationDeadline() ?? Number.POSITIVE_INFINITY) - Date.now(),
  );
  return withInvocationDeadline({ getRemainingTimeInMillis: () => limitMs }, call);
};

const endpointOfItem = (item: Item): WebhookEndpointRecord => ({
  tenant: item.tenant as string,
  id: item.endpointId as string,
  url: item.url as string,
  ...(item.description !== undefined && { description: item.description as string }),
  eventTypes: item.eventTypes as WebhookEventType[],
  status: item.status as 'enabled' | 'disabled',
  createdAt: item.createdAt as string,
  secrets: item.secrets as WebhookEndpointRecord['secrets'],
  ...(item.failingSince !== undefined && { failingSince: item.failingSince as string }),
  ...(item.disabledAt !== undefined && { disabledAt: item.disabledAt as string }),
  ...(item.disabledReason !== undefined && { disabledReason: item.disabledReason as 'gone' | 'failing' }),
  revision: item.revision as number,
});

const endpointItem = (endpoint: WebhookEndpointRecord): Item => ({
  ...webhookEndpointKey(endpoint.tenant, endpoint.id),
  type: 'WebhookEndpoint',
  tenant: endpoint.tenant,
  endpointId: endpoint.id,
  url: endpoint.url,
  description: endpoint.description,
  eventTypes: endpoint.eventTypes,
  status: endpoint.status,
  createdAt: endpoint.createdAt,
  secrets: endpoint.secrets,
  failingSince: endpoint.failingSince,
  disabledAt: endpoint.disabledAt,
  disabledReason: endpoint.disabledReason,
  revision: endpoint.revision,
});

const eventOfItem = (tenant: string, item: Item): WebhookEventRecord => {
  const body = item.body as string;
  const parsed = JSON.parse(body) as { id: string; createdAt: string; data: { paymentId?: string } };
  return {
    tenant,
    id: parsed.id,
    type: item.eventType as WebhookEventType,
    createdAt: parsed.createdAt,
    ...(parsed.data.paymentId !== undefined && { paymentId: parsed.data.paymentId }),
    body,
    expiresAt: item[TIME_TO_LIVE_ATTRIBUTE] as number,
  };
};

const attemptOfItem = (item: Item): DeliveryAttempt => ({
  eventId: item.eventId as string,
  attempt: item.attempt as number,
  attemptedAt: item.attemptedAt as string,
  durationMs: item.durationMs as number,
  ...(item.httpStatus !== undefined && { httpStatus: item.httpStatus as number }),
  ...(item.error !== undefined && { error: item.error as string }),
  outcome: item.outcome as 'delivered' | 'failed',
});

/**
 * Webhook endpoints, events and the delivery queue in the service's one table (keys in keys.ts).
 * Every change that races is a conditional write.
 */
export class DynamoDbWebhookStore implements WebhookEventStore, WebhookDeliveryStore {
  /** The endpoints, beside the events and deliveries this object stores itself. */
  readonly endpoints: WebhookEndpointStore = {
    create: (endpoint, maxPerTenant) => this.createEndpoint(endpoint, maxPerTenant),
    get: (tenant, id) => this.getEndpoint(tenant, id),
    page: (tenant, after, limit) => this.endpointPage(tenant, after, limit),
    all: (tenant) => this.allEndpoints(tenant),
    replace: (endpoint, expected) => this.replaceEndpoint(endpoint, expected),
    delete: (tenant, id) => this.deleteEndpoint(tenant, id),
    markFailing: (tenant, id, now) => this.markFailing(tenant, id, now),
    markSucceeding: (tenant, id) => this.markSucceeding(tenant, id),
    disable: (tenant, id, reason, now) => this.disable(tenant, id, reason, now),
  };

  constructor(
    private readonly client: DocumentClient,
    private readonly tableName: string,
  ) {}

  // --- endpoints ------------------------------------------------------------------------------

  /**
   * The id is allocated first, by one conditional write on the tenant's allocation item that holds
   * the limit; then the endpoint is written. A tenant without the item (endpoints from before it)
   * gets one listing its endpoints.
   */
  private async createEndpoint(endpoint: WebhookEndpointRecord, maxPerTenant: number): Promise<boolean> {
    const Key = webhookEndpointAllocationKey(endpoint.tenant);
    for (let round = 0; round < ALLOCATION_ROUNDS; round++) {
      try {
        await this.client.update({
          TableName: this.tableName,
          Key,
          UpdateExpression: 'SET #ids.#id = :createdAt',
          ConditionExpression: 'attribute_exists(#ids) AND size(#ids) < :max',
          ExpressionAttributeNames: { '#ids': 'endpointIds', '#id': endpoint.id },
          ExpressionAttributeValues: { ':createdAt': endpoint.createdAt, ':max': maxPerTenant },
        });
        await this.client.put({
          TableName: this.tableName,
          Item: endpointItem(endpoint),
          ConditionExpression: 'attribute_not_exists(pk)',
        });
        return true;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
      const allocated = await this.allocatedIds(endpoint.tenant);
      if (allocated === undefined) {
        await this.seedAllocation(endpoint.tenant);
      } else if (Object.keys(allocated).length >= maxPerTenant) {
        if (!(await this.releaseStrays(endpoint.tenant, allocated))) return false;
      }
    }
    throw new Error('The webhook endpoints kept changing during the creation');
  }

  private async allocatedIds(tenant: string): Promise<Record<string, string> | undefined> {
    const { Item } = await this.client.get({
      TableName: this.tableName,
      Key: webhookEndpointAllocationKey(tenant),
      ConsistentRead: true,
    });
    return Item?.endpointIds as Record<string, string> | undefined;
  }

  private async seedAllocation(tenant: string): Promise<void> {
    const existing = await this.allEndpoints(tenant);
    try {
      await this.client.put({
        TableName: this.tableName,
        Item: {
          ...webhookEndpointAllocationKey(tenant),
          type: 'WebhookEndpointAllocation',
          endpointIds: Object.fromEntries(existing.map((endpoint) => [endpoint.id, endpoint.createdAt])),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      });
    } catch (error) {
      // Another creation seeded it first.
      if (!isConditionFailure(error)) throw error;
    }
  }

  /** Releases allocated ids whose endpoint is gone and is not being written now; true when any was. */
  private async releaseStrays(tenant: string, allocated: Record<string, string>): Promise<boolean> {
    const present = new Set((await this.allEndpoints(tenant)).map((endpoint) => endpoint.id));
    const settled = Date.now() - STRAY_ALLOCATION_MS;
    const strays = Object.entries(allocated).filter(
      ([id, createdAt]) => !present.has(id) && Date.parse(createdAt) < settled,
    );
    for (const [id, createdAt] of strays) await this.releaseAllocation(tenant, id, createdAt);
    return strays.length > 0;
  }

  private async releaseAllocation(tenant: string, id: string, createdAt?: string): Promise<void> {
    try {
      await this.client.update({
        TableName: this.tableName,
        Key: webhookEndpointAllocationKey(tenant),
        UpdateExpression: 'REMOVE #ids.#id',
        ConditionExpression: createdAt === undefined ? 'attribute_exists(#ids.#id)' : '#ids.#id = :createdAt',
        ExpressionAttributeNames: { '#ids': 'endpointIds', '#id': id },
        ...(createdAt !== undefined && { ExpressionAttributeValues: { ':createdAt': createdAt } }),
      });
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  private async getEndpoint(tenant: string, id: string): Promise<WebhookEndpointRecord | undefined> {
    const { Item } = await this.client.get({
      TableName: this.tableName,
      Key: webhookEndpointKey(tenant, id),
      ConsistentRead: true,
    });
    return Item === undefined ? undefined : endpointOfItem(Item);
  }

  private async endpointPage(
    tenant: string,
    after: string | undefined,
    limit: number,
  ): Promise<{ endpoints: WebhookEndpointRecord[]; next?: string }> {
    const { pk } = webhookEndpointKey(tenant, '');
    const result = await this.client.query({
      TableName: this.tableName,
      KeyConditionExpression:
        after === undefined ? 'pk = :pk AND begins_with(sk, :prefix)' : 'pk = :pk AND sk > :after',
      ExpressionAttributeValues: {
        ':pk': pk,
        ...(after === undefined
          ? { ':prefix': 'ENDPOINT#' }
          : { ':after': webhookEndpointKey(tenant, after).sk }),
      },
      Limit: limit + 1,
      ConsistentRead: true,
    });
    const endpoints = (result.Items ?? []).map(endpointOfItem);
    if (endpoints.length <= limit) return { endpoints };
    const page = endpoints.slice(0, limit);
    return { endpoints: page, next: page[page.length - 1]?.id as string };
  }

  private async allEndpoints(tenant: string): Promise<WebhookEndpointRecord[]> {
    const endpoints: WebhookEndpointRecord[] = [];
    let startKey: Item | undefined;
    do {
      const result = await this.client.query({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': webhookEndpointKey(tenant, '').pk, ':prefix': 'ENDPOINT#' },
        ...(startKey !== undefined && { ExclusiveStartKey: startKey }),
      });
      endpoints.push(...(result.Items ?? []).map(endpointOfItem));
      startKey = result.LastEvaluatedKey;
    } while (startKey !== undefined);
    return endpoints;
  }

  private async replaceEndpoint(endpoint: WebhookEndpointRecord, expectedRevision: number): Promise<boolean> {
    try {
      await this.client.put({
        TableName: this.tableName,
        Item: endpointItem(endpoint),
        ConditionExpression: 'revision = :expected',
        ExpressionAttributeValues: { ':expected': expectedRevision },
      });
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  private async deleteEndpoint(tenant: string, id: string): Promise<boolean> {
    try {
      await this.client.delete({
        TableName: this.tableName,
        Key: webhookEndpointKey(tenant, id),
        ConditionExpression: 'attribute_exists(pk)',
      });
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
    // A stop before this leaves a stray id, released once the tenant is at its limit.
    await this.releaseAllocation(tenant, id);
    return true;
  }

  private async markFailing(tenant: string, id: string, now: Date): Promise<string | undefined> {
    try {
      const { Attributes } = await this.client.update({
        TableName: this.tableName,
        Key: webhookEndpointKey(tenant, id),
        UpdateExpression: 'SET failingSince = if_not_exists(failingSince, :now)',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':now': now.toISOString() },
        ReturnValues: 'ALL_NEW',
      });
      return Attributes?.failingSince as string | undefined;
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }

  private async markSucceeding(tenant: string, id: string): Promise<void> {
    try {
      await this.client.update({
        TableName: this.tableName,
        Key: webhookEndpointKey(tenant, id),
        UpdateExpression: 'REMOVE failingSince',
        ConditionExpression: 'attribute_exists(pk)',
      });
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  private async disable(tenant: string, id: string, reason: 'gone' | 'failing', now: Date): Promise<boolean> {
    try {
      await this.client.update({
        TableName: this.tableName,
        Key: webhookEndpointKey(tenant, id),
        UpdateExpression:
          'SET #status = :disabled, disabledAt = :now, disabledReason = :reason, revision = revision + :one',
        ConditionExpression: '#status = :enabled',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':disabled': 'disabled',
          ':enabled': 'enabled',
          ':now': now.toISOString(),
          ':reason': reason,
          ':one': 1,
        },
      });
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  // --- events ---------------------------------------------------------------------------------

  async putIfAbsent(event: WebhookEventRecord): Promise<boolean> {
    // One item per event: a transfer's events are found through its history (see paymentPage).
    try {
      await withinEventWriteLimit(() =>
        this.client.put({
          TableName: this.tableName,
          Item: {
            ...webhookEventKey(event.tenant, event.id),
            type: 'WebhookEvent',
            eventType: event.type,
            body: event.body,
            [TIME_TO_LIVE_ATTRIBUTE]: event.expiresAt,
            [WEBHOOK_INDEX.partitionKey]: eventsIndexKey(event.tenant),
            [WEBHOOK_INDEX.sortKey]: eventOrder(event.createdAt, event.id),
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async get(tenant: string, id: string, now: Date): Promise<WebhookEventRecord | undefined> {
    const { Item } = await this.client.get({
      TableName: this.tableName,
      Key: webhookEventKey(tenant, id),
      ConsistentRead: true,
    });
    if (Item === undefined) return undefined;
    const event = eventOfItem(tenant, Item);
    return event.expiresAt > epochSeconds(now) ? event : undefined;
  }

  /**
   * A page of events, oldest first, recorded before `createdBefore`: from the tenant's index
   * partition, or from the transfer's own partition with `paymentId.eq`. Type and expiry are
   * filtered as read, so a page reads until it is full, the events run out, or MAX_EVENT_QUERIES
   * reads are spent (then it answers with what it has and a position to go on from).
   */
  async page(request: EventPageRequest): Promise<{ events: WebhookEventRecord[]; next?: string }> {
    if (request.paymentId !== undefined)
      return this.paymentPage({ ...request, paymentId: request.paymentId });
    const partition = { name: WEBHOOK_INDEX.partitionKey, value: eventsIndexKey(request.tenant) };
    const order = WEBHOOK_INDEX.sortKey;
    // `<createdAt>#<id>` sorts after `<createdAt>`: every event recorded at or after the horizon
    // is above it.
    const until = request.createdBefore;
    const events: WebhookEventRecord[] = [];
    let position = request.after;
    let startKey: Item | undefined;
    for (let queries = 0; queries < MAX_EVENT_QUERIES; queries++) {
      // On from the position (the item at it skipped: BETWEEN includes it), else from createdAt.gte.
      const skip = position;
      const from = position ?? request.createdAtFrom;
      if (from !== undefined && from >= until) return { events };
      const result = await this.client.query({
        TableName: this.tableName,
        IndexName: WEBHOOK_INDEX.indexName,
        KeyConditionExpression:
          from === undefined
            ? '#partition = :partition AND #order < :until'
            : '#partition = :partition AND #order BETWEEN :from AND :until',
        FilterExpression:
          request.type === undefined ? '#expiresAt > :now' : '#expiresAt > :now AND eventType = :type',
        ExpressionAttributeNames: {
          '#partition': partition.name,
          '#expiresAt': TIME_TO_LIVE_ATTRIBUTE,
          '#order': order,
        },
        ExpressionAttributeValues: {
          ':partition': partition.value,
          ':now': epochSeconds(request.now),
          ':until': until,
          ...(from !== undefined && { ':from': from }),
          ...(request.type !== undefined && { ':type': request.type }),
        },
        Limit: Math.max(request.limit + 1, 100),
        ...(startKey !== undefined && { ExclusiveStartKey: startKey }),
      });
      for (const item of result.Items ?? []) {
        if (item[order] === skip) continue;
        if (events.length === request.limit) {
          return { events, next: position as string };
        }
        events.push(eventOfItem(request.tenant, item));
        position = item[order] as string;
      }
      startKey = result.LastEvaluatedKey;
      if (startKey === undefined) return { events };
      // Read on from where the read stopped, filtered-out events included.
      position = startKey[order] as string;
      startKey = undefined;
    }
    return { events, ...(position !== undefined && { next: position }) };
  }

  /**
   * A page of one transfer's events (`paymentId.eq`), in the same order and with the same
   * filters and positions as the tenant's list: its events have ids derived from its history's
   * entries (eventIdsOfHistory), so the transfer's history (one read) names them and they are read
   * by key, strongly consistent. A change whose event is not recorded yet is not listed yet.
   */
  private async paymentPage(
    request: EventPageRequest & { paymentId: string },
  ): Promise<{ events: WebhookEventRecord[]; next?: string }> {
    const history = await this.historyOf(request.tenant, request.paymentId);
    const ids = eventIdsOfHistory(request.tenant, request.paymentId, history);
    const now = epochSeconds(request.now);
    const listed = (await this.eventItems(ids.map((id) => ({ ...webhookEventKey(request.tenant, id) }))))
      .filter(
        (item) =>
          (item[TIME_TO_LIVE_ATTRIBUTE] as number) > now &&
          (request.type === undefined || item.eventType === request.type),
      )
      .map((item) => ({
        order: item[WEBHOOK_INDEX.sortKey] as string,
        event: eventOfItem(request.tenant, item),
      }))
      .filter(({ order }) => {
        if (order >= request.createdBefore) return false;
        if (request.after !== undefined) return order > request.after;
        return request.createdAtFrom === undefined || order >= request.createdAtFrom;
      })
      .sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0));
    const page = listed.slice(0, request.limit);
    const events = page.map(({ event }) => event);
    return listed.length > page.length
      ? { events, next: page[page.length - 1]?.order as string }
      : { events };
  }

  /** The transfer's history alone (the transfer's body can be large), or none when there is no transfer. */
  private async historyOf(tenant: string, paymentId: string): Promise<StatusChange[]> {
    if (!TENANT_ID_PATTERN.test(tenant)) return [];
    const { Item } = await this.client.get({
      TableName: this.tableName,
      Key: creditTransferKey(tenant, paymentId),
      ConsistentRead: true,
      ProjectionExpression: '#history',
      ExpressionAttributeNames: { '#history': 'history' },
    });
    return Array.isArray(Item?.history) ? (Item.history as StatusChange[]) : [];
  }

  /** Events by key, strongly consistent, a hundred at a time (BatchGetItem's bound). */
  private async eventItems(keys: readonly Item[]): Promise<Item[]> {
    const items: Item[] = [];
    for (let start = 0; start < keys.length; start += 100) {
      let pending: Item[] = keys.slice(start, start + 100);
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt === 5) throw new Error(`BatchGetItem left ${pending.length} events unread`);
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt));
        const result = await this.client.batchGet({
          RequestItems: { [this.tableName]: { Keys: pending, ConsistentRead: true } },
        });
        items.push(...(result.Responses?.[this.tableName] ?? []));
        pending = result.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
      }
    }
    return items;
  }

  // --- deliveries -----------------------------------------------------------------------------

  /** When this process last wrote each endpoint's queue marker (see markQueued). */
  private readonly markedAt = new Map<string, number>();
  /** Endpoints whose queue had nothing due when last read, and until when that is trusted (see due). */
  private readonly quietUntil = new Map<string, number>();
  /** Looks at the queue so far: each starts the tenants' turns one further. */
  private turn = Math.floor(Math.random() * 1_000_000);
  /** Set once the legacy shards were read empty: nothing is queued there any more. */
  private legacyDrained = false;

  private dueValues(tenant: string, endpointId: string, dueAt: string): Item {
    return {
      [WEBHOOK_INDEX.partitionKey]: webhookDueKey(tenant, endpointId),
      [WEBHOOK_INDEX.sortKey]: dueAt,
    };
  }

  /**
   * Writes the endpoint's queue marker, before the delivery it announces: no delivery is queued
   * without one. A process writes it at most once per MARK_REFRESH_MS per endpoint, since a marker
   * is removed only once its queue is seen empty MARKER_IDLE_MS after its last write.
   */
  private async markQueued(tenant: string, endpointId: string): Promise<void> {
    const order = webhookQueueOrder(tenant, endpointId);
    const now = Date.now();
    if (now - (this.markedAt.get(order) ?? Number.NEGATIVE_INFINITY) < MARK_REFRESH_MS) return;
    await this.client.put({
      TableName: this.tableName,
      Item: {
        ...webhookQueueMarkerKey(tenant, endpointId),
        type: 'WebhookDeliveryQueue',
        tenant,
        endpointId,
        queuedAt: new Date(now).toISOString(),
        [WEBHOOK_INDEX.partitionKey]: WEBHOOK_DUE_QUEUES,
        [WEBHOOK_INDEX.sortKey]: order,
      },
    });
    this.markedAt.set(order, now);
    this.quietUntil.delete(order);
  }

  async queue(
    delivery: Pick<PendingDelivery, 'tenant' | 'endpointId' | 'eventId'>,
    dueAt: Date,
    again: boolean,
    attempts = 0,
  ): Promise<boolean> {
    await this.markQueued(delivery.tenant, delivery.endpointId);
    try {
      await this.client.put({
        TableName: this.tableName,
        Item: {
          ...webhookDeliveryKey(delivery.tenant, delivery.endpointId, delivery.eventId),
          type: 'WebhookDelivery',
          tenant: delivery.tenant,
          endpointId: delivery.endpointId,
          eventId: delivery.eventId,
          attempts,
          state: 'queued',
          ...this.dueValues(delivery.tenant, delivery.endpointId, dueAt.toISOString()),
        },
        ...(!again && { ConditionExpression: 'attribute_not_exists(pk)' }),
      });
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /**
   * The due deliveries of at most QUEUES_PER_LOOK endpoint queues, the tenants in turns (each
   * look starts one tenant further) and within a tenant its endpoints in turns: one read of the
   * queue markers, then one of each queue chosen, whatever any queue's length. Queues `isFull`
   * names (their endpoint or tenant has no room now) are not read, so their backlog takes no
   * other queue's place.
   */
  async due(
    now: Date,
    limit: number,
    isFull: (tenant: string, endpointId: string) => boolean = () => false,
  ): Promise<PendingDelivery[]> {
    const nowMs = now.getTime();
    const open = (await this.queuesMarked()).filter(
      ({ tenant, endpointId }) =>
        !isFull(tenant, endpointId) &&
        (this.quietUntil.get(webhookQueueOrder(tenant, endpointId)) ?? 0) <= nowMs,
    );
    const chosen = queuesInTurns(open, this.turn++).slice(0, QUEUES_PER_LOOK);
    const perQueue = await Promise.all(
      chosen.map((queue) =>
        this.dueOfQueue(queue.tenant, queue.endpointId, now, Math.min(limit, QUEUE_READ)),
      ),
    );
    const fair: PendingDelivery[] = [];
    for (let index = 0; perQueue.some((due) => index < due.length); index++) {
      for (const due of perQueue) if (index < due.length) fair.push(due[index] as PendingDelivery);
    }
    const legacy = (await this.legacyDue(now, limit)).filter(
      (delivery) => !isFull(delivery.tenant, delivery.endpointId),
    );
    return [...fair, ...legacy].slice(0, limit);
  }

  /** The endpoints whose queue marker is kept, ordered by tenant. */
  private async queuesMarked(): Promise<{ tenant: string; endpointId: string }[]> {
    const queues: { tenant: string; endpointId: string }[] = [];
    let startKey: Item | undefined;
    for (let page = 0; page < MAX_MARKER_PAGES; page++) {
      const result = await this.client.query({
        TableName: this.tableName,
        IndexName: WEBHOOK_INDEX.indexName,
        KeyConditionExpression: '#partition = :partition',
        ExpressionAttributeNames: { '#partition': WEBHOOK_INDEX.partitionKey },
        ExpressionAttributeValues: { ':partition': WEBHOOK_DUE_QUEUES },
        ...(startKey !== undefined && { ExclusiveStartKey: startKey }),
      });
      for (const item of result.Items ?? [])
        queues.push({ tenant: item.tenant as string, endpointId: item.endpointId as string });
      startKey = result.LastEvaluatedKey;
      if (startKey === undefined) break;
    }
    return queues;
  }

  /**
   * The endpoint's due deliveries, oldest due first. A queue with nothing due is not read again
   * until its next delivery is due, or QUIET_MAX_MS, whichever is sooner (another process may
   * queue one due at once); an empty one's marker is removed once idle (sweepMarker).
   */
  private async dueOfQueue(
    tenant: string,
    endpointId: string,
    now: Date,
    limit: number,
  ): Promise<PendingDelivery[]> {
    const result = await this.client.query({
      TableName: this.tableName,
      IndexName: WEBHOOK_INDEX.indexName,
      KeyConditionExpression: '#partition = :partition',
      ExpressionAttributeNames: { '#partition': WEBHOOK_INDEX.partitionKey },
      ExpressionAttributeValues: { ':partition': webhookDueKey(tenant, endpointId) },
      Limit: limit,
    });
    const queued = (result.Items ?? []).map(pendingOfItem);
    const due = queued.filter((delivery) => delivery.dueAt <= now.toISOString());
    if (due.length > 0) return due;
    const order = webhookQueueOrder(tenant, endpointId);
    const next = queued[0] === undefined ? Number.POSITIVE_INFINITY : Date.parse(queued[0].dueAt);
    this.quietUntil.set(order, Math.min(next, now.getTime() + QUIET_MAX_MS));
    if (queued.length === 0) await this.sweepMarker(tenant, endpointId);
    return [];
  }

  /**
   * Takes the marker of an endpoint whose queue was just read empty out of the index (and lets
   * TTL remove it), unless it was written in the last MARKER_IDLE_MS: a delivery queued since its
   * last write (a process skips rewriting a marker for MARK_REFRESH_MS) is in the index by then,
   * so the queue was not read empty. One conditional write, no read; the next delivery queued
   * writes the marker whole again.
   */
  private async sweepMarker(tenant: string, endpointId: string): Promise<void> {
    try {
      await this.client.update({
        TableName: this.tableName,
        Key: webhookQueueMarkerKey(tenant, endpointId),
        UpdateExpression: 'REMOVE #partition, #order SET #expiresAt = :expires',
        ConditionExpression: 'attribute_exists(#partition) AND queuedAt < :idleSince',
        ExpressionAttributeNames: {
          '#partition': WEBHOOK_INDEX.partitionKey,
          '#order': WEBHOOK_INDEX.sortKey,
          '#expiresAt': TIME_TO_LIVE_ATTRIBUTE,
        },
        ExpressionAttributeValues: {
          ':idleSince': new Date(Date.now() - MARKER_IDLE_MS).toISOString(),
          ':expires': epochSeconds(new Date()) + MARKER_RETENTION_SECONDS,
        },
      });
      this.markedAt.delete(webhookQueueOrder(tenant, endpointId));
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  /** Deliveries queued in the legacy shards (see LEGACY_WEBHOOK_DUE_SHARDS), read until they are empty. */
  private async legacyDue(now: Date, limit: number): Promise<PendingDelivery[]> {
    if (this.legacyDrained) return [];
    const perShard = await Promise.all(
      Array.from({ length: LEGACY_WEBHOOK_DUE_SHARDS }, (_, shard) =>
        this.client.query({
          TableName: this.tableName,
          IndexName: WEBHOOK_INDEX.indexName,
          KeyConditionExpression: '#partition = :partition',
          ExpressionAttributeNames: { '#partition': WEBHOOK_INDEX.partitionKey },
          ExpressionAttributeValues: { ':partition': legacyWebhookDueShardKey(shard) },
          Limit: limit,
        }),
      ),
    );
    const queued = perShard.flatMap((result) => result.Items ?? []).map(pendingOfItem);
    if (queued.length === 0) this.legacyDrained = true;
    return queued
      .filter((delivery) => delivery.dueAt <= now.toISOString())
      .sort((a, b) => (a.dueAt < b.dueAt ? -1 : a.dueAt > b.dueAt ? 1 : 0));
  }

  /** A conditional update of a delivery still due at `dueAt`; false when it moved. */
  private async updateDelivery(
    delivery: PendingDelivery,
    update: string,
    values: Item,
    names: Record<string, string> = {},
  ): Promise<boolean> {
    try {
      await this.client.update({
        TableName: this.tableName,
        Key: webhookDeliveryKey(delivery.tenant, delivery.endpointId, delivery.eventId),
        UpdateExpression: update,
        ConditionExpression: '#order = :seen',
        ExpressionAttributeNames: { '#order': WEBHOOK_INDEX.sortKey, ...names },
        ExpressionAttributeValues: { ':seen': delivery.dueAt, ...values },
      });
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** Also moves a delivery queued in a legacy shard into its endpoint's queue. */
  async claim(delivery: PendingDelivery, until: Date): Promise<boolean> {
    await this.markQueued(delivery.tenant, delivery.endpointId);
    return this.updateDelivery(
      delivery,
      'SET #order = :until, #state = :attempting, #partition = :queue',
      {
        ':until': until.toISOString(),
        ':attempting': 'attempting',
        ':queue': webhookDueKey(delivery.tenant, delivery.endpointId),
      },
      { '#state': 'state', '#partition': WEBHOOK_INDEX.partitionKey },
    );
  }

  async releaseClaims(now: Date): Promise<number> {
    const partitions = [
      ...(await this.queuesMarked()).map(({ tenant, endpointId }) => webhookDueKey(tenant, endpointId)),
      ...Array.from({ length: LEGACY_WEBHOOK_DUE_SHARDS }, (_, shard) => legacyWebhookDueShardKey(shard)),
    ];
    let released = 0;
    for (const partition of partitions) {
      let startKey: Item | undefined;
      do {
        const result = await this.client.query({
          TableName: this.tableName,
          IndexName: WEBHOOK_INDEX.indexName,
          KeyConditionExpression: '#partition = :partition',
          FilterExpression: '#state = :attempting',
          ExpressionAttributeNames: { '#partition': WEBHOOK_INDEX.partitionKey, '#state': 'state' },
          ExpressionAttributeValues: { ':partition': partition, ':attempting': 'attempting' },
          ...(startKey !== undefined && { ExclusiveStartKey: startKey }),
        });
        for (const item of result.Items ?? []) {
          const done = await this.updateDelivery(
            pendingOfItem(item),
            'SET #order = :now, #state = :queued',
            { ':now': now.toISOString(), ':queued': 'queued' },
            { '#state': 'state' },
          );
          if (done) released++;
        }
        startKey = result.LastEvaluatedKey;
      } while (startKey !== undefined);
    }
    return released;
  }

  async retryAt(claimed: PendingDelivery, attempts: number, dueAt: Date): Promise<void> {
    await this.updateDelivery(
      claimed,
      'SET #order = :due, attempts = :attempts, #state = :queued',
      {
        ':due': dueAt.toISOString(),
        ':attempts': attempts,
        ':queued': 'queued',
      },
      { '#state': 'state' },
    );
  }

  async finish(
    claimed: PendingDelivery,
    attempts: number,
    outcome: 'delivered' | 'failed' | 'dropped',
  ): Promise<void> {
    await this.updateDelivery(
      claimed,
      'SET attempts = :attempts, #state = :outcome, #expiresAt = :expires REMOVE #order, #partition',
      {
        ':attempts': attempts,
        ':outcome': outcome,
        ':expires': epochSeconds(new Date()) + DELIVERY_RETENTION_SECONDS,
      },
      { '#state': 'state', '#expiresAt': TIME_TO_LIVE_ATTRIBUTE, '#partition': WEBHOOK_INDEX.partitionKey },
    );
  }

  async firstDeliveryMade(
    delivery: Pick<PendingDelivery, 'tenant' | 'endpointId' | 'eventId'>,
    eventCreatedAt: string,
  ): Promise<boolean> {
    const keys = [
      webhookAttemptKey(delivery.tenant, delivery.endpointId, eventCreatedAt, delivery.eventId),
      webhookDeliveryKey(delivery.tenant, delivery.endpointId, delivery.eventId),
    ];
    for (const Key of keys) {
      const { Item } = await this.client.get({
        TableName: this.tableName,
        Key,
        ConsistentRead: true,
        ProjectionExpression: 'pk',
      });
      if (Item !== undefined) return true;
    }
    return false;
  }

  async recordAttempt(
    tenant: string,
    endpointId: string,
    attempt: DeliveryAttempt,
    firstOf?: { createdAt: string },
  ): Promise<void> {
    await this.client.put({
      TableName: this.tableName,
      Item: {
        ...webhookAttemptKey(tenant, endpointId, firstOf?.createdAt ?? attempt.attemptedAt, attempt.eventId),
        type: 'WebhookAttempt',
        ...attempt,
        [TIME_TO_LIVE_ATTRIBUTE]: epochSeconds(new Date(attempt.attemptedAt)) + ATTEMPT_RETENTION_SECONDS,
      },
    });
  }

  async attempts(tenant: string, endpointId: string, limit: number): Promise<DeliveryAttempt[]> {
    const result = await this.client.query({
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      FilterExpression: '#expiresAt > :now',
      ExpressionAttributeNames: { '#expiresAt': TIME_TO_LIVE_ATTRIBUTE },
      ExpressionAttributeValues: {
        ':pk': webhookAttemptKey(tenant, endpointId, '', '').pk,
        ':prefix': 'ATTEMPT#',
        ':now': epochSeconds(new Date()),
      },
      ScanIndexForward: false,
      Limit: limit,
    });
    return (result.Items ?? []).map(attemptOfItem);
  }
}
