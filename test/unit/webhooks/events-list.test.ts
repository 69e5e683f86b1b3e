import { randomBytes, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '#adapters/aws/dynamodb-client';
import { creditTransferKey } from '#adapters/table/keys';
import { createTableInput } from '#adapters/table/table-definition';
import { DynamoDbWebhookStore } from '#adapters/webhooks/webhook-store';
import type { Clock } from '#domain/commons/ports';
import { toStatusChangedEvent } from '#domain/credit-transfers/lifecycle';
import { listEvents } from '#domain/webhooks/list-events';
import {
  EVENT_SETTLE_MS,
  statusChangedEventRecord,
  type WebhookEventRecord,
} from '#domain/webhooks/webhook-event';
import { createDynamoDbClient } from '#local/table';

/**
 * The events list over the real table adapter (dynalite in memory), with the clock handed in:
 * a consumer following it with cursors never misses an event, even one written after a later
 * one (two writes racing).
 */
const require = createRequire(import.meta.url);
const dynalite = require('dynalite') as (options: object) => Server;
const TABLE = 'events-unit';
const T0 = new Date('2031-03-04T05:06:07.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);

let server: Server;
let store: DynamoDbWebhookStore;
let now = T0;
const clock: Clock = { now: () => now };
const key = randomBytes(32);

beforeAll(async () => {
  server = dynalite({ createTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await createDynamoDbClient(endpoint).send(new CreateTableCommand(createTableInput(TABLE)));
  store = new DynamoDbWebhookStore(createDocumentClient(endpoint), TABLE);
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

let sequence = 0;
const eventOf = (tenant: string, createdAt: Date): WebhookEventRecord =>
  statusChangedEventRecord(
    {
      eventId: randomUUID(),
      tenant,
      paymentId: randomUUID(),
      status: 'Received',
      date: createdAt.toISOString(),
      sequence: sequence++ % 1000,
      actor: 'test',
    },
    createdAt,
  );

const list = (tenant: string, query: Record<string, readonly string[]> = {}) =>
  listEvents({ events: store, cursorKey: async () => key, clock }, tenant, query);

const idsOf = (bodies: string[]) => bodies.map((body) => (JSON.parse(body) as { id: string }).id);

/**
 * A consumer as the guide describes it: page after page by cursor, dropping ids it has, until a
 * page brings nothing new or ends the list. It keeps the last cursor to come back with; after a
 * page that ended the list (every event on it settled), it comes back from the newest
 * `createdAt` it saw instead.
 */
const consumer = (tenant: string) => {
  const seen: string[] = [];
  let since: string | undefined;
  let newest: string | undefined;
  let cursor = '';
  return {
    seen,
    catchUp: async () => {
      for (;;) {
        const page = await list(tenant, {
          limit: ['2'],
          ...(since !== undefined && { 'createdAt.gte': [since] }),
          ...(cursor !== '' && { cursor: [cursor] }),
        });
        let fresh = 0;
        for (const body of page.bodies) {
          const event = JSON.parse(body) as { id: string; createdAt: string };
          if (seen.includes(event.id)) continue;
          seen.push(event.id);
          fresh++;
          if (newest === undefined || event.createdAt > newest) newest = event.createdAt;
        }
        if (page.nextCursor === '') {
          // A cursor belongs to its filters: the next look starts afresh from there.
          since = newest;
          cursor = '';
          return;
        }
        cursor = page.nextCursor;
        if (fresh === 0) return;
      }
    },
  };
};

describe('the events list', () => {
  it('never lets a consumer page past an event written after a later one (two writes racing)', async () => {
    const tenant = `tenant-${randomUUID()}`;
    const older = [eventOf(tenant, at(-30_000)), eventOf(tenant, at(-20_000)), eventOf(tenant, at(-10_000))];
    for (const event of older) await store.putIfAbsent(event);
    // Writer A takes its createdAt first, writer B a moment later; B's write lands first.
    const a = eventOf(tenant, at(0));
    const b = eventOf(tenant, at(5));
    await store.putIfAbsent(b);
    const follower = consumer(tenant);
    now = at(10);
    await follower.catchUp();
    // The recent events are shown at once.
    expect(follower.seen).toEqual([...older, b].map((event) => event.id));
    // A's write lands a second later, well within the write limit.
    now = at(1_000);
    await store.putIfAbsent(a);
    await follower.catchUp();
    now = at(EVENT_SETTLE_MS + 1_000);
    await follower.catchUp();

    expect([...follower.seen].sort()).toEqual([...older, a, b].map((event) => event.id).sort());
  });

  it('shows a recent event at once; the cursor of that page still reaches one written late before it', async () => {
    const tenant = `tenant-${randomUUID()}`;
    const later = eventOf(tenant, at(100_005));
    await store.putIfAbsent(later);
    now = at(100_010);
    const first = await list(tenant);
    expect(idsOf(first.bodies)).toEqual([later.id]);
    // The cursor stays at the horizon, before the recent event.
    expect(first.nextCursor).not.toBe('');

    // Written late, earlier in the order than the event already shown.
    const earlier = eventOf(tenant, at(100_000));
    await store.putIfAbsent(earlier);
    now = at(100_000 + EVENT_SETTLE_MS + 10);
    const next = await list(tenant, { cursor: [first.nextCursor] });
    expect(idsOf(next.bodies)).toEqual([earlier.id, later.id]);
    // Every event on the page settled: the page ends the list.
    expect(next.nextCursor).toBe('');
  });

  it('refuses a cursor issued to another tenant', async () => {
    const tenant = `tenant-${randomUUID()}`;
    const other = `tenant-${randomUUID()}`;
    for (const owner of [tenant, tenant, other, other]) await store.putIfAbsent(eventOf(owner, at(200_000)));
    now = at(200_000 + EVENT_SETTLE_MS + 1);
    const list = (as: string, cursor?: string) =>
      listEvents({ events: store, cursorKey: async () => key, clock }, as, {
        limit: ['1'],
        ...(cursor !== undefined && { cursor: [cursor] }),
      });
    const { nextCursor } = await list(tenant);
    expect(nextCursor).not.toBe('');
    await expect(list(tenant, nextCursor)).resolves.toMatchObject({ bodies: [expect.any(String)] });
    await expect(list(other, nextCursor)).rejects.toMatchObject({
      name: 'InvalidRequestError',
      invalidParams: [expect.objectContaining({ name: 'cursor' })],
    });
  });

  it('gives up an event write that is not done within the write limit, so none lands after the horizon', async () => {
    // A table that takes connections and never answers.
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const stalled = new DynamoDbWebhookStore(
      createDocumentClient(`http://127.0.0.1:${(silent.address() as AddressInfo).port}`),
      TABLE,
    );
    try {
      // Without the limit the call would wait 30 s per attempt, five attempts.
      await expect(stalled.putIfAbsent(eventOf('tenant-x', new Date()))).rejects.toMatchObject({
        name: 'ServiceUnavailableError',
      });
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  }, 15_000);
});

describe("a transfer's events (paymentId.eq)", () => {
  it('are one item each, found through the transfer history in order, paged, and never another tenant’s', async () => {
    const client = createDocumentClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const paymentId = randomUUID();
    const statuses = ['Received', 'AcceptedTechnicalValidation', 'AcceptedCustomerProfile'] as const;
    const history = statuses.map((status, index) => ({
      status,
      date: at(index).toISOString(),
      actor: 'test',
    }));
    await client.put({
      TableName: TABLE,
      Item: {
        ...creditTransferKey('tenant-h', paymentId),
        transfer: '{}',
        status: 'AcceptedCustomerProfile',
        history,
      },
    });
    // Recorded in another order than the history's (writes race): listed by createdAt.
    const recorded = [2, 0, 1].map((sequence) =>
      statusChangedEventRecord(
        toStatusChangedEvent(
          { tenant: 'tenant-h', paymentId, history },
          sequence,
          history[sequence] as never,
        ),
        at(10_000 + sequence * 1000),
      ),
    );
    for (const event of recorded) await store.putIfAbsent(event);
    const partitions = (await client.scan({ TableName: TABLE })).Items?.filter((item) =>
      String(item.pk).startsWith('EVENT#tenant-h#'),
    );
    expect(partitions).toHaveLength(3);

    now = at(10 * 60_000);
    const first = await list('tenant-h', { 'paymentId.eq': [paymentId], limit: ['2'] });
    expect(first.bodies.map((body) => JSON.parse(body).data.sequence)).toEqual([0, 1]);
    const second = await list('tenant-h', {
      'paymentId.eq': [paymentId],
      limit: ['2'],
      cursor: [first.nextCursor],
    });
    expect(second.bodies.map((body) => JSON.parse(body).data.sequence)).toEqual([2]);
    expect(second.nextCursor).toBe('');
    expect((await list('tenant-other', { 'paymentId.eq': [paymentId] })).bodies).toEqual([]);
    now = T0;
  });
});
