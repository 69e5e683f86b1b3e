import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type { AddressInfo, Server } from 'node:net';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDocumentClient, type DocumentClient } from '#adapters/aws/dynamodb-client';
import {
  legacyWebhookDueShardKey,
  webhookDeliveryKey,
  webhookDueKey,
  webhookQueueMarkerKey,
} from '#adapters/table/keys';
import { createTableInput, WEBHOOK_INDEX } from '#adapters/table/table-definition';
import { DynamoDbWebhookStore, QUEUES_PER_LOOK } from '#adapters/webhooks/webhook-store';
import type { StatusChangedEvent } from '#domain/credit-transfers/ports';
import type { PendingDelivery, WebhookResponse } from '#domain/webhooks/ports';
import type { DeliveryDependencies } from '#domain/webhooks/webhook-delivery';
import { DEFAULT_DISPATCHER_LIMITS, DeliveryDispatcher } from '#domain/webhooks/webhook-dispatcher';
import type { WebhookEndpointRecord } from '#domain/webhooks/webhook-endpoint';
import { statusChangedEventRecord } from '#domain/webhooks/webhook-event';
import { createDynamoDbClient } from '#local/table';
import { endpointRecord, ScriptedSender } from './fakes.ts';

/**
 * One tenant's backlog never holds another tenant's deliveries back, over the real table adapter
 * (dynalite in memory) and the real dispatcher: tenant A has ten endpoints that never answer (each
 * attempt hangs, as a trickling endpoint holds it for the whole attempt time limit) and a thousand
 * deliveries queued before tenant B's; B's first delivery and its retry are started within a look
 * or two at the queue, while A's backlog is still there. Before, a look read the hundred oldest due
 * deliveries whatever their tenant (all A's, whose tenant was at its limit), and B waited for A's
 * backlog to drain.
 */
const require = createRequire(import.meta.url);
const dynalite = require('dynalite') as (options: object) => Server;
const TABLE = 'delivery-fairness-unit';

let server: Server;
let raw: DocumentClient;

beforeAll(async () => {
  server = dynalite({ createTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await createDynamoDbClient(endpoint).send(new CreateTableCommand(createTableInput(TABLE)));
  raw = createDocumentClient(endpoint);
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

const statusChange = (tenant: string): StatusChangedEvent => ({
  eventId: randomUUID(),
  tenant,
  paymentId: randomUUID(),
  sequence: 1,
  status: 'AcceptedTechnicalValidation',
  previousStatus: 'Received',
  date: new Date().toISOString(),
  actor: 'workflow',
});

/** A clock the test moves on: retries fall due without waiting for them. */
const movableClock = () => {
  let offsetMs = 0;
  return { now: () => new Date(Date.now() + offsetMs), advance: (ms: number) => (offsetMs += ms) };
};

/** The store as the dispatcher uses it, with every claim (made as an attempt starts) noted. */
const claimsNoted = (store: DynamoDbWebhookStore) => {
  const claimed: PendingDelivery[] = [];
  const deliveries = Object.create(store) as DynamoDbWebhookStore;
  deliveries.claim = (delivery, until) => {
    claimed.push(delivery);
    return store.claim(delivery, until);
  };
  return { deliveries, claimed };
};

const queuedCount = async (tenant: string, endpoints: readonly WebhookEndpointRecord[]) => {
  let count = 0;
  for (const endpoint of endpoints) {
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await raw.query({
        TableName: TABLE,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        FilterExpression: '#state = :queued',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: {
          ':pk': webhookDeliveryKey(tenant, endpoint.id, '').pk,
          ':prefix': 'DELIVERY#',
          ':queued': 'queued',
        },
        ...(startKey !== undefined && { ExclusiveStartKey: startKey }),
      });
      count += page.Count ?? 0;
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
  }
  return count;
};

describe('delivery fairness between tenants', () => {
  it("starts tenant B's first delivery and its retry within two looks while tenant A's thousand queued deliveries wait on ten hanging endpoints", async () => {
    const store = new DynamoDbWebhookStore(raw, TABLE);
    const clock = movableClock();
    const sender = new ScriptedSender();
    const hanging: (() => void)[] = [];
    const hang = () =>
      new Promise<WebhookResponse>((resolve) =>
        hanging.push(() => resolve({ error: 'answer body not complete within 10 s', durationMs: 10_000 })),
      );

    const endpointsA = Array.from({ length: 10 }, (_, index) =>
      endpointRecord({ tenant: 'tenant-a', id: `a-${index}`, url: `https://a${index}.example.com/h` }),
    );
    const endpointB = endpointRecord({ tenant: 'tenant-b', id: 'b-0', url: 'https://b.example.com/h' });
    for (const endpoint of [...endpointsA, endpointB]) {
      expect(await store.endpoints.create(endpoint, 100)).toBe(true);
      if (endpoint.tenant === 'tenant-a') sender.answers.set(endpoint.url, hang);
    }
    // B's endpoint fails its first attempt, then answers.
    let bAnswers = 0;
    sender.answers.set(endpointB.url, async () => ({
      httpStatus: bAnswers++ === 0 ? 500 : 204,
      durationMs: 2,
    }));

    // A's backlog, due before anything of B's: 100 events to each of its 10 endpoints.
    const backlogDueAt = new Date(clock.now().getTime() - 60_000);
    for (let index = 0; index < 100; index++) {
      const event = statusChangedEventRecord(statusChange('tenant-a'), clock.now());
      await store.putIfAbsent(event);
      await Promise.all(
        endpointsA.map((endpoint) =>
          store.queue(
            { tenant: 'tenant-a', endpointId: endpoint.id, eventId: event.id },
            backlogDueAt,
            false,
          ),
        ),
      );
    }
    const eventB = statusChangedEventRecord(statusChange('tenant-b'), clock.now());
    await store.putIfAbsent(eventB);
    await store.queue(
      { tenant: 'tenant-b', endpointId: endpointB.id, eventId: eventB.id },
      clock.now(),
      false,
    );

    const { deliveries, claimed } = claimsNoted(store);
    const settledB: string[] = [];
    let bSettled: () => void = () => {};
    const deps: DeliveryDependencies = {
      endpoints: store.endpoints,
      events: store,
      deliveries,
      sender,
      clock,
      policy: { scheduleSeconds: [1, 1, 1], disableAfterSeconds: 86_400 },
      urlPolicy: { allowLocalReceivers: false },
      secrets: { open: () => Promise.reject(new Error('plain secrets here')) },
    };
    const dispatcher = new DeliveryDispatcher(deps, DEFAULT_DISPATCHER_LIMITS, {
      onSettled: (result, delivery) => {
        if (delivery.tenant !== 'tenant-b') return;
        settledB.push(String(result));
        bSettled();
      },
    });
    const claimedOfB = () => claimed.filter((delivery) => delivery.tenant === 'tenant-b');
    const queries = vi.spyOn(raw, 'query');

    // Two looks: A takes its tenant's limit of attempts, all hanging, and B's first goes out.
    for (let look = 0; look < 2 && claimedOfB().length === 0; look++) await dispatcher.pump();
    expect(claimedOfB()).toHaveLength(1);
    expect(claimedOfB()[0]?.attempts).toBe(0);
    expect(claimed.filter((delivery) => delivery.tenant === 'tenant-a')).toHaveLength(
      DEFAULT_DISPATCHER_LIMITS.perTenant,
    );
    // Reads per look are bounded by the queues, not A's thousand deliveries.
    expect(queries.mock.calls.length).toBeLessThanOrEqual(2 * (1 + QUEUES_PER_LOOK) + 4);

    // It fails, and its retry is due a second later.
    await new Promise<void>((resolve) => {
      bSettled = resolve;
      if (settledB.length > 0) resolve();
    });
    expect(settledB).toEqual(['retrying']);
    clock.advance(2_000);
    queries.mockClear();
    for (let look = 0; look < 2 && claimedOfB().length === 1; look++) await dispatcher.pump();
    expect(claimedOfB()).toHaveLength(2);
    // A, at its limit, has its queues passed over unread.
    const partitionsRead = queries.mock.calls.map(
      ([input]) => (input.ExpressionAttributeValues as Record<string, unknown>)[':partition'],
    );
    expect(partitionsRead).toContain(webhookDueKey('tenant-b', endpointB.id));
    expect(partitionsRead.filter((partition) => String(partition).includes('tenant-a'))).toEqual([]);
    expect(claimedOfB()[1]).toMatchObject({ eventId: eventB.id, attempts: 1 });
    await new Promise<void>((resolve) => {
      bSettled = resolve;
      if (settledB.length > 1) resolve();
    });
    expect(settledB).toEqual(['retrying', 'delivered']);

    // All the while, A's backlog waits: its attempts still hang, nothing of it went out besides.
    expect(hanging).toHaveLength(DEFAULT_DISPATCHER_LIMITS.perTenant);
    expect(await queuedCount('tenant-a', endpointsA)).toBe(1000 - DEFAULT_DISPATCHER_LIMITS.perTenant);

    for (const release of hanging) release();
    await dispatcher.idle();
  }, 120_000);
});

describe('the per-endpoint queues', () => {
  it('still delivers a delivery queued in a legacy shard before the change, and moves it to its endpoint queue when claimed', async () => {
    const store = new DynamoDbWebhookStore(raw, TABLE);
    const endpoint = endpointRecord({ tenant: 'tenant-legacy', id: 'l-0' });
    await store.endpoints.create(endpoint, 100);
    const event = statusChangedEventRecord(statusChange('tenant-legacy'), new Date());
    await store.putIfAbsent(event);
    const dueAt = new Date(Date.now() - 1_000).toISOString();
    await raw.put({
      TableName: TABLE,
      Item: {
        ...webhookDeliveryKey('tenant-legacy', endpoint.id, event.id),
        type: 'WebhookDelivery',
        tenant: 'tenant-legacy',
        endpointId: endpoint.id,
        eventId: event.id,
        attempts: 2,
        state: 'queued',
        [WEBHOOK_INDEX.partitionKey]: legacyWebhookDueShardKey(1),
        [WEBHOOK_INDEX.sortKey]: dueAt,
      },
    });

    const due = (await store.due(new Date(), 100)).filter((delivery) => delivery.tenant === 'tenant-legacy');
    expect(due).toEqual([
      { tenant: 'tenant-legacy', endpointId: endpoint.id, eventId: event.id, attempts: 2, dueAt },
    ]);
    expect(await store.claim(due[0] as PendingDelivery, new Date(Date.now() - 500))).toBe(true);

    // Claimed, it is in its endpoint's queue: a claim that ended is due there, and released at start.
    const again = new DynamoDbWebhookStore(raw, TABLE);
    expect((await again.due(new Date(), 100)).map((delivery) => delivery.eventId)).toContain(event.id);
    expect(await again.releaseClaims(new Date())).toBeGreaterThanOrEqual(1);
  });

  it('removes the marker of an endpoint queue left empty, and a delivery queued later is found again', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const store = new DynamoDbWebhookStore(raw, TABLE);
    const endpoint = endpointRecord({ tenant: 'tenant-sweep', id: 's-0' });
    await store.endpoints.create(endpoint, 100);
    const first = statusChangedEventRecord(statusChange('tenant-sweep'), new Date());
    await store.queue(
      { tenant: 'tenant-sweep', endpointId: endpoint.id, eventId: first.id },
      new Date(),
      false,
    );
    const [queued] = (await store.due(new Date(), 100)).filter(
      (delivery) => delivery.tenant === 'tenant-sweep',
    );
    const until = new Date(Date.now() + 60_000);
    expect(await store.claim(queued as PendingDelivery, until)).toBe(true);
    await store.finish({ ...(queued as PendingDelivery), dueAt: until.toISOString() }, 1, 'delivered');

    const marker = () =>
      raw.get({ TableName: TABLE, Key: webhookQueueMarkerKey('tenant-sweep', endpoint.id) });
    // Within minutes of its last write the marker stands, its queue empty or not.
    await store.due(new Date(), 100);
    expect((await marker()).Item).toBeDefined();
    vi.setSystemTime(Date.now() + 10 * 60_000);
    await store.due(new Date(), 100);
    // Out of the index (TTL removes it later): no look reads its queue any more.
    expect((await marker()).Item?.[WEBHOOK_INDEX.partitionKey]).toBeUndefined();
    const queries = vi.spyOn(raw, 'query');
    await store.due(new Date(Date.now() + 60_000), 100);
    expect(JSON.stringify(queries.mock.calls)).not.toContain(webhookDueKey('tenant-sweep', endpoint.id));

    const second = statusChangedEventRecord(statusChange('tenant-sweep'), new Date());
    await store.queue(
      { tenant: 'tenant-sweep', endpointId: endpoint.id, eventId: second.id },
      new Date(),
      false,
    );
    expect((await marker()).Item?.[WEBHOOK_INDEX.partitionKey]).toBeDefined();
    expect((await store.due(new Date(), 100)).map((delivery) => delivery.eventId)).toContain(second.id);
  });
});
