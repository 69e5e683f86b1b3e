import type { PendingDelivery } from './ports.ts';
import { type AttemptResult, attemptDelivery, type DeliveryDependencies } from './webhook-delivery.ts';

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
    const due = await this.deps.deliveries.due(this.deps.clock.now(), this.limits.batch);
    return this.offer(due);
  }

  /** Starts attempts of these deliveries (just queued, or just read as due) while the pool has room. */
  offer(deliveries: readonly PendingDelivery[]): number {
    let started = 0;
    for (const delivery of deliveries) {
      if (this.running >= this.limits.concurrency) break;
      const endpointKey = `${delivery.tenant}/${delivery.endpointId}`;
      const deliveryKey = `${endpointKey}/${delivery.eventId}`;
      if (this.attempting.has(deliveryKey)) continue;
      if ((this.perEndpoint.get(endpointKey) ?? 0) >= this.limits.perEndpoint) continue;
      if ((this.perTenant.get(delivery.tenant) ?? 0) >= this.limits.perTenant) continue;
      this.start(delivery, endpointKey, deliveryKey);
      started++;
    }
    return started;
  }

  /** Resolves once every attempt started so far has ended. */
  async idle(): Promise<void> {
    while (this.tasks.size > 0) await Promise.all([...this.tasks]);
  }

  private start(delivery: PendingDelivery, endpointKey: string, deliveryKey: string): void {
    this.running++;
    increment(this.perEndpoint, endpointKey, 1);
    increment(this.perTenant, delivery.tenant, 1);
    this.attempting.add(deliveryKey);
    const task = attemptDelivery(this.deps, delivery)
      .then(
        (result) => this.events.onSettled?.(result, delivery),
        (error: unknown) => {
          // The claim ends by itself and the delivery is due again: nothing is lost.
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
      });
    this.tasks.add(task);
  }
}
