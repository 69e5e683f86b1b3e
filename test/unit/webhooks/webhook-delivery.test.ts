import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { StatusChangedEvent } from '#domain/credit-transfers/ports';
import type { WebhookResponse } from '#domain/webhooks/ports';
import {
  attemptDelivery,
  endpointsOncePerBatch,
  makeFirstDeliveries,
  type RecordingDependencies,
  recordEvent,
  recordStatusChangeForFirstDeliveries,
} from '#domain/webhooks/webhook-delivery';
import { DeliveryDispatcher } from '#domain/webhooks/webhook-dispatcher';
import { ENDPOINT_DISABLED_TYPE, statusChangedEventRecord } from '#domain/webhooks/webhook-event';
import {
  CLAIM_SECONDS,
  nextAttemptAt,
  retryPolicyFrom,
  STANDARD_RETRY_POLICY,
  STANDARD_RETRY_SCHEDULE_SECONDS,
  verdictOf,
} from '#domain/webhooks/webhook-schedule';
import { deliveryDeps, endpointRecord, MemoryWebhookStore, ScriptedSender } from './fakes.ts';

/** A status change kept and queued for each endpoint, as a retry or a redelivery finds it. */
const recordStatusChange = (deps: RecordingDependencies, change: StatusChangedEvent) =>
  recordEvent(deps, (createdAt) => statusChangedEventRecord(change, createdAt));

const T0 = new Date('2026-03-02T10:00:00.000Z');
let sequence = 0;
const change = (overrides: Partial<StatusChangedEvent> = {}): StatusChangedEvent => {
  sequence++;
  return {
    eventId: `00000000-0000-8000-8000-${String(sequence).padStart(12, '0')}`,
    tenant: 't1',
    paymentId: `payment-${sequence}`,
    sequence: 1,
    status: 'AcceptedTechnicalValidation',
    previousStatus: 'Received',
    date: new Date().toISOString(),
    actor: 'workflow',
    ...overrides,
  };
};

const failing: () => Promise<WebhookResponse> = async () => ({ httpStatus: 500, durationMs: 3 });
const refused: () => Promise<WebhookResponse> = async () => ({ error: 'connection refused', durationMs: 1 });

beforeEach(() => {
  vi.useFakeTimers({ now: T0, toFake: ['Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

const advanceSeconds = (seconds: number) => vi.setSystemTime(new Date(Date.now() + seconds * 1000));

/** Attempts every delivery due now, and waits for them. */
const runDue = async (dispatcher: DeliveryDispatcher) => {
  await dispatcher.pump();
  await dispatcher.idle();
};

describe('retry schedule', () => {
  it('waits 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h after the failed attempts, then gives up', () => {
    const waits = [1, 2, 3, 4, 5, 6, 7].map(
      (attempts) =>
        ((nextAttemptAt(STANDARD_RETRY_POLICY, attempts, T0)?.getTime() ?? 0) - T0.getTime()) / 1000,
    );
    expect(waits).toEqual([5, 300, 1800, 7200, 18_000, 36_000, 36_000]);
    expect(nextAttemptAt(STANDARD_RETRY_POLICY, 8, T0)).toBeUndefined();
  });

  it('takes a shorter schedule from a setting, and refuses a malformed one', () => {
    expect(retryPolicyFrom({ schedule: '1,2.5' }).scheduleSeconds).toEqual([1, 2.5]);
    expect(retryPolicyFrom({}).scheduleSeconds).toBe(STANDARD_RETRY_SCHEDULE_SECONDS);
    expect(() => retryPolicyFrom({ schedule: '1,,2' })).toThrow(/WEBHOOK_RETRY_SCHEDULE_SECONDS/);
    expect(() => retryPolicyFrom({ schedule: '0' })).toThrow();
    expect(() => retryPolicyFrom({ disableAfter: 'soon' })).toThrow(/WEBHOOK_DISABLE_AFTER_SECONDS/);
  });

  it('delivers on 2xx only; 410 is gone; redirects and errors fail', () => {
    expect([200, 204, 299].map(verdictOf)).toEqual(['delivered', 'delivered', 'delivered']);
    expect(verdictOf(410)).toBe('gone');
    expect([301, 302, 400, 404, 500, 503, undefined].map(verdictOf)).toEqual(Array(7).fill('failed'));
  });
});

describe('delivery', () => {
  it('retries a failing delivery on the schedule with the same id, then gives it up', async () => {
    const store = new MemoryWebhookStore();
    const endpoint = endpointRecord();
    await store.endpoints.create(endpoint, 100);
    const sender = new ScriptedSender();
    sender.answers.set(endpoint.url, failing);
    const deps = deliveryDeps(store, sender);
    const dispatcher = new DeliveryDispatcher(deps);
    const event = change();
    await recordStatusChange(deps, event);

    const attemptTimes: number[] = [];
    for (let round = 0; round < 2000 && attemptTimes.length < 9; round++) {
      const before = sender.requests.length;
      await runDue(dispatcher);
      if (sender.requests.length > before) attemptTimes.push((Date.now() - T0.getTime()) / 1000);
      advanceSeconds(1);
      // Skip ahead through the long waits, a minute at a time, once a retry is far off.
      if (attemptTimes.length >= 3) advanceSeconds(59);
      if (Date.now() - T0.getTime() > 40 * 3600 * 1000) break;
    }
    expect(attemptTimes.length).toBe(8);
    const gaps = attemptTimes.slice(1).map((time, index) => time - (attemptTimes[index] ?? 0));
    // Each gap is the scheduled wait, to the second for the first two (later ones within the minute steps).
    expect(gaps[0]).toBe(5);
    expect(gaps[1]).toBe(300);
    for (const [index, gap] of gaps.entries()) {
      const wait = STANDARD_RETRY_SCHEDULE_SECONDS[index] ?? 0;
      expect(gap).toBeGreaterThanOrEqual(wait);
      expect(gap).toBeLessThan(wait + 60);
    }
    expect(new Set(sender.requests.map((request) => request.headers['webhook-id']))).toEqual(
      new Set([event.eventId]),
    );
    expect(store.stateOf('t1', endpoint.id, event.eventId)?.state).toBe('failed');
    expect(store.attemptLog.map((attempt) => attempt.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it("wakes the retry sender at each retry's due time, and not for a delivery that succeeded or was given up", async () => {
    const store = new MemoryWebhookStore();
    const endpoint = endpointRecord();
    await store.endpoints.create(endpoint, 100);
    const sender = new ScriptedSender();
    sender.answers.set(endpoint.url, failing);
    const wakeUps: { eventId: string; dueAt: string }[] = [];
    const deps = {
      ...deliveryDeps(store, sender),
      waker: {
        wakeAt: async (delivery: { eventId: string }, dueAt: Date) =>
          void wakeUps.push({ eventId: delivery.eventId, dueAt: dueAt.toISOString() }),
      },
    };
    const dispatcher = new DeliveryDispatcher(deps);
    const event = change();
    await recordStatusChange(deps, event);

    await runDue(dispatcher);
    expect(wakeUps).toEqual([
      { eventId: event.eventId, dueAt: new Date(T0.getTime() + 5_000).toISOString() },
    ]);
    expect(store.stateOf('t1', endpoint.id, event.eventId)?.dueAt).toBe(wakeUps[0]?.dueAt);

    sender.answers.set(endpoint.url, async () => ({ httpStatus: 204, durationMs: 2 }));
    advanceSeconds(5);
    await runDue(dispatcher);
    expect(wakeUps).toHaveLength(1);
    expect(store.stateOf('t1', endpoint.id, event.eventId)?.state).toBe('delivered');
  });

  it('keeps each event on its own schedule: a backoff never holds a later event back', async () => {
    const store = new MemoryWebhookStore();
    const endpoint = endpointRecord();
    await store.endpoints.create(endpoint, 100);
    const sender = new ScriptedSender();
    let calls = 0;
    sender.answers.set(endpoint.url, async () =>
      ++calls === 1 ? { httpStatus: 503, durationMs: 1 } : { httpStatus: 200, durationMs: 1 },
    );
    const deps = deliveryDeps(store, sender);
    const dispatcher = new DeliveryDispatcher(deps);
    const first = change();
    await recordStatusChange(deps, first);
    await runDue(dispatcher);
    advanceSeconds(1);
    const second = change();
    await recordStatusChange(deps, second);
    await runDue(dispatcher);
    // The second went out at once, while the first waits out its 5 s.
    expect(sender.requests.map((request) => request.headers['webhook-id'])).toEqual([
      first.eventId,
      second.eventId,
    ]);
    expect(store.stateOf('t1', endpoint.id, second.eventId)?.state).toBe('delivered');
    advanceSeconds(4);
    await runDue(dispatcher);
    expect(store.stateOf('t1', endpoint.id, first.eventId)?.state).toBe('delivered');
    expect(sender.requests.at(-1)?.headers['webhook-id']).toBe(first.eventId);
  });

  it('signs each attempt with every live secret, verifiable with the Standard Webhooks library', async () => {
    const store = new MemoryWebhookStore();
    const endpoint = endpointRecord({
      secrets: [
        { value: 'whsec_dGhlLW5ldy1zZWNyZXQtdGhhdC1pcy1sb25nLWVub3VnaA==', createdAt: T0.toISOString() },
        {
          value: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
          createdAt: T0.toISOString(),
          expiresAt: new Date(T0.getTime() + 3600_000).toISOString(),
        },
      ],
    });
    await store.endpoints.create(endpoint, 100);
    const sender = new ScriptedSender();
    const deps = deliveryDeps(store, sender);
    const [queued] = await recordStatusChange(deps, change());
    await attemptDelivery(deps, queued as never);
    const request = sender.requests[0];
    expect(request?.headers['webhook-signature']?.split(' ')).toHaveLength(2);
    for (const secret of endpoint.secrets) {
      expect(
        new Webhook(secret.value ?? '').verify(request?.body ?? '', request?.headers ?? {}),
      ).toMatchObject({
        type: 'credit-transfer.status-changed',
      });
    }
    // Past the overlap the replaced secret signs no more.
    advanceSeconds(3601);
    const [later] = await recordStatusChange(deps, change());
    await attemptDelivery(deps, later as never);
    expect(sender.requests[1]?.headers['webhook-signature']?.split(' ')).toHaveLength(1);
  });

  it('disables an endpoint at once on 410 Gone, tells the other endpoints, and drops what was queued for it', async () => {
    const store = new MemoryWebhookStore();
    const gone = endpointRecord({ url: 'https://gone.example.com/h' });
    const other = endpointRecord({ url: 'https://other.example.com/h' });
    await store.endpoints.create(gone, 100);
    await store.endpoints.create(other, 100);
    const sender = new ScriptedSender();
    sender.answers.set(gone.url, async () => ({ httpStatus: 410, durationMs: 1 }));
    const deps = deliveryDeps(store, sender);
    const dispatcher = new DeliveryDispatcher(deps, {
      concurrency: 1,
      perEndpoint: 1,
      perTenant: 1,
      batch: 100,
      firstWaitMs: 1_000,
    });
    const first = change();
    await recordStatusChange(deps, first);
    const second = change();
    await recordStatusChange(deps, second);
    for (let round = 0; round < 10; round++) await runDue(dispatcher);

    expect((await store.endpoints.get('t1', gone.id))?.status).toBe('disabled');
    expect((await store.endpoints.get('t1', gone.id))?.disabledReason).toBe('gone');
    const toGone = sender.requests.filter((request) => request.url === gone.url);
    expect(toGone).toHaveLength(1);
    const toOther = sender.requests
      .filter((request) => request.url === other.url)
      .map((request) => JSON.parse(request.body));
    expect(toOther.map((body) => body.type)).toContain(ENDPOINT_DISABLED_TYPE);
    expect(toOther.find((body) => body.type === ENDPOINT_DISABLED_TYPE)?.data).toMatchObject({
      endpointId: gone.id,
      reason: 'gone',
    });
  });

  it('disables an endpoint that failed every attempt for three days, not before', async () => {
    const store = new MemoryWebhookStore();
    const endpoint = endpointRecord();
    await store.endpoints.create(endpoint, 100);
    const sender = new ScriptedSender();
    sender.answers.set(endpoint.url, refused);
    const deps = deliveryDeps(store, sender);
    const dispatcher = new DeliveryDispatcher(deps);
    let disabled = false;
    // A new event every hour; every delivery refused.
    for (let hour = 0; hour < 80 && !disabled; hour++) {
      await recordStatusChange(deps, change());
      for (let minute = 0; minute < 60; minute += 5) {
        await runDue(dispatcher);
        advanceSeconds(300);
      }
      disabled = (await store.endpoints.get('t1', endpoint.id))?.status === 'disabled';
    }
    const disabledAt = (await store.endpoints.get('t1', endpoint.id))?.disabledAt ?? '';
    // The first failure was at T0; the first failure at or past three days disables it.
    expect((Date.parse(disabledAt) - T0.getTime()) / 3600_000).toBe(72);
    expect((await store.endpoints.get('t1', endpoint.id))?.disabledReason).toBe('failing');
    expect(
      [...store.eventRecords.values()].filter((event) => event.type === ENDPOINT_DISABLED_TYPE),
    ).toHaveLength(1);
  });

  it('a success ends the failing streak', async () => {
    const store = new MemoryWebhookStore();
    const endpoint = endpointRecord();
    await store.endpoints.create(endpoint, 100);
    const sender = new ScriptedSender();
    sender.answers.set(endpoint.url, refused);
    const deps = deliveryDeps(store, sender);
    const dispatcher = new DeliveryDispatcher(deps);
    await recordStatusChange(deps, change());
    await runDue(dispatcher);
    expect((await store.endpoints.get('t1', endpoint.id))?.failingSince).toBe(T0.toISOString());
    sender.answers.delete(endpoint.url);
    advanceSeconds(5);
    await runDue(dispatcher);
    expect((await store.endpoints.get('t1', endpoint.id))?.failingSince).toBeUndefined();
  });

  it('loses nothing when a worker dies holding a delivery: it is due again once the claim ends, or at once after a restart', async () => {
    const store = new MemoryWebhookStore();
    const endpoint = endpointRecord();
    await store.endpoints.create(endpoint, 100);
    const deps = deliveryDeps(store, new ScriptedSender());
    const [queued] = await recordStatusChange(deps, change());
    // A worker claims it and dies before any answer.
    expect(await store.claim(queued as never, new Date(Date.now() + CLAIM_SECONDS * 1000))).toBe(true);
    expect(await store.due(new Date(), 10)).toHaveLength(0);
    advanceSeconds(CLAIM_SECONDS);
    expect(await store.due(new Date(), 10)).toHaveLength(1);

    const [another] = await recordStatusChange(deps, change());
    await store.claim(another as never, new Date(Date.now() + CLAIM_SECONDS * 1000));
    expect(await store.releaseClaims(new Date())).toBeGreaterThanOrEqual(1);
    expect((await store.due(new Date(), 10)).map((delivery) => delivery.eventId)).toContain(another?.eventId);
  });
});

describe('first deliveries (made at once, queued only when they fail)', () => {
  /** A store whose writes the test counts by kind. */
  const counted = (store: MemoryWebhookStore) => {
    const writes: string[] = [];
    for (const name of ['putIfAbsent', 'recordAttempt', 'queue', 'claim', 'finish', 'retryAt'] as const) {
      const original = store[name].bind(store) as (...args: never[]) => Promise<unknown>;
      Object.assign(store, {
        [name]: (...args: never[]) => {
          writes.push(name);
          return original(...args);
        },
      });
    }
    return writes;
  };

  it('delivers a new event without writing a delivery: the event and its attempt alone', async () => {
    const store = new MemoryWebhookStore();
    const endpoint = endpointRecord();
    await store.endpoints.create(endpoint, 100);
    const sender = new ScriptedSender();
    const deps = deliveryDeps(store, sender);
    const writes = counted(store);
    const event = change();
    const recorded = await recordStatusChangeForFirstDeliveries(deps, event);
    // The attempt a moment after the event was recorded: it is found by the event's time all the same.
    advanceSeconds(1);
    await makeFirstDeliveries(deps, new DeliveryDispatcher(deps), recorded);

    expect(sender.requests.map((request) => request.headers['webhook-id'])).toEqual([event.eventId]);
    expect(writes).toEqual(['putIfAbsent', 'recordAttempt']);
    expect(store.attemptLog.map((attempt) => [attempt.attempt, attempt.outcome])).toEqual([[1, 'delivered']]);
    expect(store.queued.size).toBe(0);
    // Published again later: recognised, and neither delivered nor queued a second time.
    const again = await recordStatusChangeForFirstDeliveries(deps, event);
    expect(again).toMatchObject({ first: [], queued: [] });
    expect(sender.requests).toHaveLength(1);
  });

  it('queues a failed first attempt for its retry, counted, and retries it with the same id', async () => {
    const store = new MemoryWebhookStore();
    const endpoint = endpointRecord();
    await store.endpoints.create(endpoint, 100);
    const sender = new ScriptedSender();
    sender.answers.set(endpoint.url, failing);
    const deps = deliveryDeps(store, sender);
    const dispatcher = new DeliveryDispatcher(deps);
    const event = change();
    await makeFirstDeliveries(deps, dispatcher, await recordStatusChangeForFirstDeliveries(deps, event));
    expect(store.stateOf('t1', endpoint.id, event.eventId)).toMatchObject({
      state: 'queued',
      attempts: 1,
      dueAt: new Date(T0.getTime() + 5_000).toISOString(),
    });

    sender.answers.delete(endpoint.url);
    advanceSeconds(5);
    await runDue(dispatcher);
    expect(store.stateOf('t1', endpoint.id, event.eventId)).toMatchObject({
      state: 'delivered',
      attempts: 2,
    });
    expect(new Set(sender.requests.map((request) => request.headers['webhook-id']))).toEqual(
      new Set([event.eventId]),
    );
  });

  it('loses no delivery when recording stops before the first deliveries: recording the change again queues them', async () => {
    const store = new MemoryWebhookStore();
    const endpoint = endpointRecord();
    await store.endpoints.create(endpoint, 100);
    const sender = new ScriptedSender();
    const deps = deliveryDeps(store, sender);
    const event = change();
    // The process dies after keeping the event, before any attempt.
    await recordStatusChangeForFirstDeliveries(deps, event);
    expect(sender.requests).toHaveLength(0);

    // The change comes back (the message was not acknowledged).
    const again = await recordStatusChangeForFirstDeliveries(deps, event);
    expect(again.queued.map((delivery) => delivery.eventId)).toEqual([event.eventId]);
    await runDue(new DeliveryDispatcher(deps));
    expect(sender.requests.map((request) => request.headers['webhook-id'])).toEqual([event.eventId]);
    expect(store.stateOf('t1', endpoint.id, event.eventId)?.state).toBe('delivered');
  });

  it("waits for a place past the endpoint's limit when it frees soon, and queues the delivery when none does", async () => {
    const store = new MemoryWebhookStore();
    const endpoint = endpointRecord();
    await store.endpoints.create(endpoint, 100);
    const sender = new ScriptedSender();
    const hanging: (() => void)[] = [];
    let hang = false;
    let inFlight = 0;
    let mostInFlight = 0;
    sender.answers.set(endpoint.url, () => {
      if (hang)
        return new Promise((resolve) => hanging.push(() => resolve({ httpStatus: 204, durationMs: 10_000 })));
      mostInFlight = Math.max(mostInFlight, ++inFlight);
      return new Promise((resolve) =>
        setTimeout(() => {
          inFlight--;
          resolve({ httpStatus: 204, durationMs: 5 });
        }, 5),
      );
    });
    const deps = deliveryDeps(store, sender);
    const limits = { concurrency: 64, perEndpoint: 2, perTenant: 16, batch: 100, firstWaitMs: 200 };
    const dispatcher = new DeliveryDispatcher(deps, limits);
    const quick = [change(), change(), change(), change(), change()];
    const recorded = [];
    for (const event of quick) recorded.push(await recordStatusChangeForFirstDeliveries(deps, event));
    await Promise.all(recorded.map((one) => makeFirstDeliveries(deps, dispatcher, one)));
    expect(sender.requests).toHaveLength(5);
    expect(store.queued.size).toBe(0);
    expect(mostInFlight).toBe(2);

    hang = true;
    const slow = [change(), change(), change()];
    const pending = [];
    for (const event of slow)
      pending.push(
        makeFirstDeliveries(deps, dispatcher, await recordStatusChangeForFirstDeliveries(deps, event)),
      );
    await vi.waitFor(() => expect(hanging).toHaveLength(2));
    // The third waited its 200 ms for a place, then was queued, due now.
    await vi.waitFor(() => expect(store.queued.size).toBe(1));
    expect(store.stateOf('t1', endpoint.id, slow[2]?.eventId as string)?.state).toBe('queued');
    for (const release of hanging) release();
    await Promise.all(pending);
    await dispatcher.idle();
  });

  it('queues what the pool has no room for, and fails when a delivery can be neither made nor queued, leaving it to the change recorded again', async () => {
    const store = new MemoryWebhookStore();
    const endpoint = endpointRecord();
    await store.endpoints.create(endpoint, 100);
    const deps = deliveryDeps(store, new ScriptedSender());
    const full = { offerFirst: async () => undefined };
    const event = change();
    await makeFirstDeliveries(deps, full, await recordStatusChangeForFirstDeliveries(deps, event));
    expect(store.stateOf('t1', endpoint.id, event.eventId)).toMatchObject({ state: 'queued', attempts: 0 });

    // The table refuses both the attempt's record and the queue write.
    store.recordAttempt = async () => {
      throw new Error('table unavailable');
    };
    store.queue = async () => {
      throw new Error('table unavailable');
    };
    const stuck = change();
    const recorded = await recordStatusChangeForFirstDeliveries(deps, stuck);
    await expect(makeFirstDeliveries(deps, new DeliveryDispatcher(deps), recorded)).rejects.toThrow(
      'table unavailable',
    );
    // Neither attempt nor delivery is recorded: the change recorded again queues it.
    store.queue = MemoryWebhookStore.prototype.queue.bind(store);
    const again = await recordStatusChangeForFirstDeliveries(deps, stuck);
    expect(again.queued.map((delivery) => delivery.eventId)).toEqual([stuck.eventId]);
  });
});

describe('recording a batch of events', () => {
  it("reads each tenant's endpoints once per batch, queues every event for them, and reads again after a failed read", async () => {
    const store = new MemoryWebhookStore();
    const endpoint = endpointRecord();
    await store.endpoints.create(endpoint, 100);
    const deps = deliveryDeps(store, new ScriptedSender());
    const reads: string[] = [];
    let failNext = false;
    const counted = {
      all: async (tenant: string) => {
        reads.push(tenant);
        if (failNext) {
          failNext = false;
          throw new Error('table unavailable');
        }
        return store.endpoints.all(tenant);
      },
    };
    const batch = { ...deps, endpoints: endpointsOncePerBatch(counted) };
    const events = [change(), change(), change({ tenant: 't2' }), change()];
    const queued = [];
    for (const event of events) queued.push(...(await recordStatusChange(batch, event)));
    expect(reads).toEqual(['t1', 't2']);
    expect(queued.map((delivery) => delivery.eventId)).toEqual(
      events.filter((event) => event.tenant === 't1').map((event) => event.eventId),
    );

    const next = { ...deps, endpoints: endpointsOncePerBatch(counted) };
    failNext = true;
    await expect(recordStatusChange(next, change())).rejects.toThrow('table unavailable');
    expect(await recordStatusChange(next, change())).toHaveLength(1);
    expect(reads).toEqual(['t1', 't2', 't1', 't1']);
  });
});

describe('dispatcher', () => {
  it('never lets one slow endpoint hold the pool: another tenant goes out while it hangs', async () => {
    const store = new MemoryWebhookStore();
    const slow = endpointRecord({ tenant: 't1', url: 'https://slow.example.com/h' });
    const quick = endpointRecord({ tenant: 't2', url: 'https://quick.example.com/h' });
    await store.endpoints.create(slow, 100);
    await store.endpoints.create(quick, 100);
    const sender = new ScriptedSender();
    const hanging: (() => void)[] = [];
    sender.answers.set(
      slow.url,
      () => new Promise((resolve) => hanging.push(() => resolve({ error: 'timeout', durationMs: 10_000 }))),
    );
    const deps = deliveryDeps(store, sender);
    const dispatcher = new DeliveryDispatcher(deps, {
      concurrency: 4,
      perEndpoint: 2,
      perTenant: 3,
      batch: 100,
      firstWaitMs: 1_000,
    });
    for (let index = 0; index < 20; index++) await recordStatusChange(deps, change({ tenant: 't1' }));
    await dispatcher.pump();
    await vi.waitFor(() => expect(hanging).toHaveLength(2));
    const quickEvent = change({ tenant: 't2' });
    await recordStatusChange(deps, quickEvent);
    await dispatcher.pump();
    await vi.waitFor(() =>
      expect(store.stateOf('t2', quick.id, quickEvent.eventId)?.state).toBe('delivered'),
    );
    expect(hanging).toHaveLength(2);
    for (const release of hanging) release();
    await dispatcher.idle();
  });
});
