import type { PendingDelivery } from './ports.ts';
import {
  type AttemptResult,
  attemptDelivery,
  attemptFirstDelivery,
  type DeliveryDependencies,
  type FirstDelivery,
} from './webhook-delivery.ts';

export interface DispatcherLimits {
  /** Attempts in flight at once, overall. */
  concurrency: number;
  /**
   * Attempts in flight at once to one endpoint: a slow or dead endpoint holds at most this many
   * of the pool's places (each for at most the attempt timeout), never the whole pool.
   */
  perEndpoint: number;
  /** Attempts in flight at once for one tenant: one tenant's many slow endpoints leave room for the others. */
  perTenant: number;
  /** Due deliveries read per look at the queue. */
  batch: number;
  /**
   * How long a first delivery (see FirstDelivery) waits for a place before it is queued instead:
   * places free within milliseconds when endpoints answer at once, and a queued delivery costs
   * table writes that one made at once does not.
   */
  firstWaitMs: number;
}

const increment = (counts: Map<string, number>, key: string, by: number): void => {
  const count = (counts.get(key) ?? 0) + by;
  if (count <= 0) counts.delete(key);
  else counts.set(key, count);
};

export const DEFAULT_DISPATCHER_LIMITS: DispatcherLimits = {
  concurrency: 64,
  perEndpoint: 4,
  perTenant: 16,
  batch: 100,
  firstWaitMs: 2_000,
};

/**
 * Runs delivery attempts from the persisted queue with a bounded pool. Due deliveries of an
 * endpoint at its limit are passed over (they stay due) so the others' go ahead; every attempt
 * has its own time limit, so no endpoint holds a place for long.
 */
export class DeliveryDispatcher {
  private running = 0;
  private readonly perEndpoint = new Map<string, number>();
  private readonly perTenant = new Map<string, number>();
  /** Deliveries this dispatcher is attempting, so a second look at the queue does not start them twice. */
  private readonly attempting = new Set<string>();
  private readonly tasks = new Set<Promise<void>>();
  /** First deliveries waiting for a place, in order. */
  private readonly waiting: {
    tenant: string;
    endpointKey: string;
    deliveryKey: string;
    admit: () => void;
  }[] = [];

  constructor(
    private readonly deps: DeliveryDependencies,
    private readonly limits: DispatcherLimits = DEFAULT_DISPATCHER_LIMITS,
    private readonly events: {
      onError?: (error: unknown, delivery: PendingDelivery) => void;
      onSettled?: (result: AttemptResult | 'error', delivery: PendingDelivery) => void;
    } = {},
  ) {}

  get busy(): number {
    return this.running;
  }

  /** Starts attempts of due deliveries while the pool has room; answers how many it started. */
  async pump(): Promise<number> {
    if (this.running >= this.limits.concurrency) return 0;
    // The endpoints and tenants at their limit are not read: their backlog takes no one's turn.
    const due = await this.deps.deliveries.due(
      this.deps.clock.now(),
      this.limits.batch,
      (tenant, endpointId) =>
        (this.perEndpoint.get(`${tenant}/${endpointId}`) ?? 0) >= this.limits.perEndpoint ||
        (this.perTenant.get(tenant) ?? 0) >= this.limits.perTenant,
    );
    return this.offer(due);
  }

  /** Starts attempts of these deliveries (just queued, or just read as due) while the pool has room. */
  offer(deliveries: readonly PendingDelivery[]): number {
    let started = 0;
    for (const delivery of deliveries) {
      if (this.running >= this.limits.concurrency) break;
      const endpointKey = `${delivery.tenant}/${delivery.endpointId}`;
      const deliveryKey = `${endpointKey}/${delivery.eventId}`;
      if (!this.hasRoom(delivery.tenant, endpointKey, deliveryKey)) continue;
      // Its failure is no loss: the claim ends by itself and the delivery is due again.
      this.start(delivery, endpointKey, deliveryKey, () => attemptDelivery(this.deps, delivery)).catch(
        () => {},
      );
      started++;
    }
    return started;
  }

  /**
   * Starts the first attempt of a delivery in no table yet (see FirstDelivery) once the pool has
   * room for it: answers how it ended once it is delivered or queued for a retry, and rejects
   * when it could be neither. Undefined when no place came free within `firstWaitMs`: the caller
   * queues it.
   */
  async offerFirst(first: FirstDelivery): Promise<AttemptResult | undefined> {
    const delivery = {
      tenant: first.endpoint.tenant,
      endpointId: first.endpoint.id,
      eventId: first.event.id,
    };
    const endpointKey = `${delivery.tenant}/${delivery.endpointId}`;
    const deliveryKey = `${endpointKey}/${delivery.eventId}`;
    const waits = !this.hasRoom(delivery.tenant, endpointKey, deliveryKey);
    if (waits) {
      const admitted = await new Promise<boolean>((resolve) => {
        const waiter = {
          tenant: delivery.tenant,
          endpointKey,
          deliveryKey,
          admit: () => {
            clearTimeout(timer);
            resolve(true);
          },
        };
        const timer = setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(waiter), 1);
          resolve(false);
        }, this.limits.firstWaitMs);
        this.waiting.push(waiter);
      });
      if (!admitted) return undefined;
    }
    const pending = { ...delivery, attempts: 0, dueAt: this.deps.clock.now().toISOString() };
    return this.start(pending, endpointKey, deliveryKey, () => attemptFirstDelivery(this.deps, first), waits);
  }

  /** Resolves once every attempt started so far has ended. */
  async idle(): Promise<void> {
    while (this.tasks.size > 0) await Promise.all([...this.tasks]);
  }

  /** Starts the waiting first deliveries that have a place now, in order (each counted as it starts). */
  private admitWaiting(): void {
    for (let index = 0; index < this.waiting.length; ) {
      const waiter = this.waiting[index] as (typeof this.waiting)[number];
      if (this.hasRoom(waiter.tenant, waiter.endpointKey, waiter.deliveryKey)) {
        this.waiting.splice(index, 1);
        // Held until it starts: no other delivery takes its place meanwhile.
        this.reserve(waiter.tenant, waiter.endpointKey, waiter.deliveryKey);
        waiter.admit();
      } else index++;
    }
  }

  private reserve(tenant: string, endpointKey: string, deliveryKey: string): void {
    this.running++;
    increment(this.perEndpoint, endpointKey, 1);
    increment(this.perTenant, tenant, 1);
    this.attempting.add(deliveryKey);
  }

  private hasRoom(tenant: string, endpointKey: string, deliveryKey: string): boolean {
    return (
      this.running < this.limits.concurrency &&
      !this.attempting.has(deliveryKey) &&
      (this.perEndpoint.get(endpointKey) ?? 0) < this.limits.perEndpoint &&
      (this.perTenant.get(tenant) ?? 0) < this.limits.perTenant
    );
  }

  private start(
    delivery: PendingDelivery,
    endpointKey: string,
    deliveryKey: string,
    attempt: () => Promise<AttemptResult>,
    reserved = false,
  ): Promise<AttemptResult> {
    if (!reserved) this.reserve(delivery.tenant, endpointKey, deliveryKey);
    const result = attempt();
    const task = result
      .then(
        (outcome) => this.events.onSettled?.(outcome, delivery),
        (error: unknown) => {
          this.events.onError?.(error, delivery);
          this.events.onSettled?.('error', delivery);
        },
      )
      .finally(() => {
        this.running--;
        increment(this.perEndpoint, endpointKey, -1);
        increment(this.perTenant, delivery.tenant, -1);
        this.attempting.delete(deliveryKey);
        this.tasks.delete(task);
        this.admitWaiting();
      });
    this.tasks.add(task);
    return result;
  }
}
