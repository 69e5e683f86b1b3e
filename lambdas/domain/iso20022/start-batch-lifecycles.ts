import type { Clock } from '../commons/ports.ts';
import type { PendingAnnouncer, WorkflowStarter } from '../credit-transfers/ports.ts';
import { type LimitDependencies, reserveLimits } from '../payment-controls/count-limits.ts';
import { inPool } from './pool.ts';
import type { BatchReference, BatchStore } from './ports.ts';
import { batchPaymentIds, heldForApproval } from './submit-batch.ts';

/**
 * Starts in flight at once: Step Functions' StartExecution bucket refills at 150 to 300 a second,
 * and the SDK's adaptive retries slow each caller down on throttling; 16 in flight keep well
 * within it. The pace (below) bounds the rate; this bounds what waits on Step Functions at once.
 */
export const START_CONCURRENCY = 16;

/** The fastest pace a setting may ask for: in effect unpaced (the local runtime's default). */
export const MAX_BATCH_STARTS_PER_SECOND = 10_000;

/**
 * How fast a batch's lifecycles are started: `startsPerSecond` is what the workflow's reserved
 * concurrency takes beside the API's peak (lib/concurrency.ts), so a batch never drives its
 * steps into Lambda throttling. The clock and the wait are ports, so a test paces without time.
 */
export interface StartPace {
  readonly startsPerSecond: number;
  readonly clock: Clock;
  readonly sleep: (milliseconds: number) => Promise<void>;
}

export interface BatchLifecyclesDependencies {
  batches: Pick<BatchStore, 'get'>;
  workflow: WorkflowStarter;
  /** Publishes the change to Pending of each transfer held for approval: no workflow runs while it waits. */
  announcer: PendingAnnouncer;
  pace: StartPace;
  /** The transfers and the limit counters: needed for a batch whose tenant has limits. */
  limits?: Omit<LimitDependencies, 'workflow' | 'announcer'>;
}

export interface BatchLifecyclesReport {
  /** False for a batch that is not there or not stored yet: nothing to start. */
  found: boolean;
  /** Lifecycles asked to start (a start under a name used already starts nothing). */
  started: number;
  /** Transfers held for approval: no lifecycle, their change to Pending announced; an approval moves each on. */
  held: number;
  /** Starts (or announcements) that failed: those transfers stay due in the recovery index, for the reconciler. */
  failed: number;
}

/**
 * Starts the lifecycle of every transfer of a stored batch, at the pace given and a bounded
 * number at a time: the n-th start waits until n / startsPerSecond seconds after the first. Each
 * execution's name is derived from its transfer, so a repeat (a retried invocation, a second
 * request that stored the same batch) starts nothing twice. A transfer held for approval waits
 * with no workflow: its change to Pending is announced (published), and its approval moves it on.
 * With limits, each transfer is first counted against them (which starts it, holds it or rejects
 * it, as the outcome says).
 */
export const startBatchLifecycles = async (
  deps: BatchLifecyclesDependencies,
  { tenant, batchId }: BatchReference,
): Promise<BatchLifecyclesReport> => {
  const batch = await deps.batches.get(tenant, batchId);
  // Not stored yet: the request storing it asks again once it is (or a repeat of it does).
  if (batch === undefined || batch.state !== 'Stored')
    return { found: false, started: 0, held: 0, failed: 0 };
  const held = heldForApproval(batch);
  const paymentIds = batchPaymentIds(batch);
  // Counted against limits first, each held transfer too (it holds its reservation while it waits).
  const counted = batch.limitRules !== undefined;
  const { startsPerSecond, clock, sleep } = deps.pace;
  const first = clock.now().getTime();
  let failed = 0;
  let started = 0;
  await inPool(paymentIds, START_CONCURRENCY, async (paymentId, index) => {
    const wait = first + (index * 1000) / startsPerSecond - clock.now().getTime();
    if (wait > 0) await sleep(wait);
    try {
      if (counted) {
        if (deps.limits === undefined) throw new Error('A batch has limits and no limit counters were given');
        const record = await deps.limits.store.get(tenant, paymentId);
        if (record?.limits?.state === 'reserving') {
          // Counting it starts it, holds it for approval or rejects it, as the limits say.
          const counted = await reserveLimits(
            { ...deps.limits, workflow: deps.workflow, announcer: deps.announcer },
            record,
          );
          if (counted.status === 'Received') started += 1;
          return;
        }
      }
      if (held.has(index)) {
        // No workflow while it waits: its change to Pending is published, so approvers hear of it.
        await deps.announcer.announce({ tenant, paymentId });
        return;
      }
      await deps.workflow.start({ tenant, paymentId, trigger: 'initiation' });
      started += 1;
    } catch {
      failed += 1;
    }
  });
  return { found: true, started, held: held.size, failed };
};

/** Seconds a batch of `count` transfers takes to start at `startsPerSecond`: its last start's wait. */
export const batchStartSeconds = (count: number, startsPerSecond: number): number =>
  Math.max(0, count - 1) / startsPerSecond;
