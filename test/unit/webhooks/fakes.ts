import { systemClock } from '#domain/commons/ports';
import type {
  EventPageRequest,
  PendingDelivery,
  WebhookDeliveryStore,
  WebhookEndpointStore,
  WebhookEventStore,
  WebhookRequest,
  WebhookResponse,
  WebhookSender,
} from '#domain/webhooks/ports';
import type { DeliveryDependencies } from '#domain/webhooks/webhook-delivery';
import {
  type DeliveryAttempt,
  newEndpointId,
  type WebhookEndpointRecord,
} from '#domain/webhooks/webhook-endpoint';
import { WEBHOOK_EVENT_TYPES, type WebhookEventRecord } from '#domain/webhooks/webhook-event';
import { STANDARD_RETRY_POLICY } from '#domain/webhooks/webhook-schedule';

interface QueuedDelivery extends PendingDelivery {
  state: string;
}

/** The webhook ports in memory, for unit tests of the delivery logic (the table adapter has its own tests through the local runtime). */
export class MemoryWebhookStore implements WebhookEventStore, WebhookDeliveryStore {
  readonly endpointRecords = new Map<string, WebhookEndpointRecord>();
  readonly eventRecords = new Map<string, WebhookEventRecord>();
  readonly queued = new Map<string, QueuedDelivery>();
  readonly attemptLog: (DeliveryAttempt & { endpointId: string; filedAt: string })[] = [];

  readonly endpoints: WebhookEndpointStore = {
    create: async (endpoint, maxPerTenant) => {
      const held = [...this.endpointRecords.values()].filter((e) => e.tenant === endpoint.tenant).length;
      if (held >= maxPerTenant) return false;
      this.endpointRecords.set(`${endpoint.tenant}/${endpoint.id}`, structuredClone(endpoint));
      return true;
    },
    get: async (tenant, id) => structuredClone(this.endpointRecords.get(`${tenant}/${id}`)),
    page: async () => ({ endpoints: [] }),
    all: async (tenant) =>
      [...this.endpointRecords.values()].filter((e) => e.tenant === tenant).map((e) => structuredClone(e)),
    replace: async (endpoint, expected) => {
      const key = `${endpoint.tenant}/${endpoint.id}`;
      if (this.endpointRecords.get(key)?.revision !== expected) return false;
      this.endpointRecords.set(key, structuredClone(endpoint));
      return true;
    },
    delete: async (tenant, id) => this.endpointRecords.delete(`${tenant}/${id}`),
    markFailing: async (tenant, id, now) => {
      const endpoint = this.endpointRecords.get(`${tenant}/${id}`);
      if (endpoint === undefined) return undefined;
      endpoint.failingSince ??= now.toISOString();
      return endpoint.failingSince;
    },
    markSucceeding: async (tenant, id) => {
      const endpoint = this.endpointRecords.get(`${tenant}/${id}`);
      if (endpoint !== undefined) delete endpoint.failingSince;
    },
    disable: async (tenant, id, reason, now) => {
      const endpoint = this.endpointRecords.get(`${tenant}/${id}`);
      if (endpoint === undefined || endpoint.status !== 'enabled') return false;
      Object.assign(endpoint, { status: 'disabled', disabledReason: reason, disabledAt: now.toISOString() });
      return true;
    },
  };

  async putIfAbsent(event: WebhookEventRecord) {
    const key = `${event.tenant}/${event.id}`;
    if (this.eventRecords.has(key)) return false;
    this.eventRecords.set(key, event);
    return true;
  }

  async get(tenant: string, id: string): Promise<WebhookEventRecord | undefined> {
    return this.eventRecords.get(`${tenant}/${id}`);
  }

  async page(request: EventPageRequest): Promise<{ events: WebhookEventRecord[]; next?: string }> {
    const events = [...this.eventRecords.values()].filter((event) => event.tenant === request.tenant);
    return { events: events.slice(0, request.limit) };
  }

  private key(delivery: Pick<PendingDelivery, 'tenant' | 'endpointId' | 'eventId'>): string {
    return `${delivery.tenant}/${delivery.endpointId}/${delivery.eventId}`;
  }

  async queue(
    delivery: Pick<PendingDelivery, 'tenant' | 'endpointId' | 'eventId'>,
    dueAt: Date,
    again: boolean,
    attempts = 0,
  ) {
    const key = this.key(delivery);
    if (!again && this.queued.has(key)) return false;
    this.queued.set(key, { ...delivery, attempts, dueAt: dueAt.toISOString(), state: 'queued' });
    return true;
  }

  async due(
    now: Date,
    limit: number,
    isFull: (tenant: string, endpointId: string) => boolean = () => false,
  ): Promise<PendingDelivery[]> {
    return [...this.queued.values()]
      .filter(
        (delivery) =>
          ['queued', 'attempting'].includes(delivery.state) &&
          delivery.dueAt <= now.toISOString() &&
          !isFull(delivery.tenant, delivery.endpointId),
      )
      .sort((a, b) => a.dueAt.localeCompare(b.dueAt))
      .slice(0, limit)
      .map(({ state: _state, ...delivery }) => delivery);
  }

  private moveIfSeen(delivery: PendingDelivery, change: Partial<QueuedDelivery>): boolean {
    const current = this.queued.get(this.key(delivery));
    if (
      current === undefined ||
      current.dueAt !== delivery.dueAt ||
      !['queued', 'attempting'].includes(current.state)
    ) {
      return false;
    }
    Object.assign(current, change);
    return true;
  }

  async claim(delivery: PendingDelivery, until: Date) {
    return this.moveIfSeen(delivery, { dueAt: until.toISOString(), state: 'attempting' });
  }

  async retryAt(claimed: PendingDelivery, attempts: number, dueAt: Date) {
    this.moveIfSeen(claimed, { attempts, dueAt: dueAt.toISOString(), state: 'queued' });
  }

  async finish(claimed: PendingDelivery, attempts: number, outcome: string) {
    this.moveIfSeen(claimed, { attempts, state: outcome });
  }

  async releaseClaims(now: Date) {
    let released = 0;
    for (const delivery of this.queued.values()) {
      if (delivery.state === 'attempting') {
        Object.assign(delivery, { state: 'queued', dueAt: now.toISOString() });
        released++;
      }
    }
    return released;
  }

  async recordAttempt(
    _tenant: string,
    endpointId: string,
    attempt: DeliveryAttempt,
    firstOf?: { createdAt: string },
  ) {
    this.attemptLog.push({ ...attempt, endpointId, filedAt: firstOf?.createdAt ?? attempt.attemptedAt });
  }

  async firstDeliveryMade(
    delivery: Pick<PendingDelivery, 'tenant' | 'endpointId' | 'eventId'>,
    eventCreatedAt: string,
  ) {
    return (
      this.queued.has(this.key(delivery)) ||
      this.attemptLog.some(
        (attempt) =>
          attempt.endpointId === delivery.endpointId &&
          attempt.eventId === delivery.eventId &&
          attempt.filedAt === eventCreatedAt,
      )
    );
  }

  async attempts(_tenant: string, endpointId: string, limit: number) {
    return this.attemptLog
      .filter((attempt) => attempt.endpointId === endpointId)
      .reverse()
      .slice(0, limit);
  }

  stateOf(tenant: string, endpointId: string, eventId: string): QueuedDelivery | undefined {
    return this.queued.get(`${tenant}/${endpointId}/${eventId}`);
  }
}

/** A sender whose answer per URL the test sets; it records every request and can hold answers back. */
export class ScriptedSender implements WebhookSender {
  readonly requests: WebhookRequest[] = [];
  answers = new Map<string, () => Promise<WebhookResponse>>();

  async send(request: WebhookRequest): Promise<WebhookResponse> {
    this.requests.push(request);
    const answer = this.answers.get(request.url);
    return answer ? answer() : { httpStatus: 200, durationMs: 1 };
  }
}

export const endpointRecord = (overrides: Partial<WebhookEndpointRecord> = {}): WebhookEndpointRecord => ({
  tenant: 't1',
  id: newEndpointId(new Date()),
  url: 'https://hooks.example.com/a',
  eventTypes: [...WEBHOOK_EVENT_TYPES],
  status: 'enabled',
  createdAt: new Date().toISOString(),
  secrets: [{ value: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', createdAt: new Date().toISOString() }],
  revision: 1,
  ...overrides,
});

export const deliveryDeps = (store: MemoryWebhookStore, sender: WebhookSender): DeliveryDependencies => ({
  endpoints: store.endpoints,
  events: store,
  deliveries: store,
  sender,
  clock: systemClock,
  policy: STANDARD_RETRY_POLICY,
  urlPolicy: { allowLocalReceivers: false },
  // The fakes' endpoints hold plain secrets (as stored before sealing): nothing to open.
  secrets: {
    open: () => Promise.reject(new Error('the fakes hold no sealed secret')),
  },
});
