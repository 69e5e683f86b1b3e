import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
});

import { documentClient } from '#adapters/aws/dynamodb-client';
import { SandboxRail } from '#adapters/credit-transfers/sandbox-rail';
import type { Clock } from '#domain/commons/ports';
import { DEFAULT_LIFECYCLE_SETTINGS } from '#domain/credit-transfers/lifecycle-steps';
import type {
  PendingAnnouncer,
  RecoveryCandidate,
  RecoveryQueue,
  WorkflowStarter,
} from '#domain/credit-transfers/ports';
import { reconcileCreditTransfers } from '#domain/credit-transfers/reconcile-credit-transfers';
import { metrics } from '#shared/metrics';
import { workflowDependencies } from '#workflow/dependencies';
import { reconcile } from '#workflow/reconcile';
import { operationsEventPublisher } from '#workflow/status-events';
import {
  executionsOf,
  initiate,
  lifecycleStore,
  publishedEvents,
  publishingAnnouncer,
  startRunner,
  startWorkflowEnvironment,
  stored,
  TABLE,
} from './harness.ts';

let environment: Awaited<ReturnType<typeof startWorkflowEnvironment>>;

beforeAll(async () => {
  environment = await startWorkflowEnvironment();
});

afterAll(async () => {
  await environment?.close();
});

const at = (date: Date): Clock => ({ now: () => date });
const later = (seconds: number): Date => new Date(Date.now() + seconds * 1000);

const reconcileAt = (
  clock: Clock,
  workflow: WorkflowStarter,
  options: { everything?: boolean } = {},
  queue: RecoveryQueue = lifecycleStore(),
  announcer: PendingAnnouncer = publishingAnnouncer,
) =>
  reconcileCreditTransfers(
    {
      queue,
      store: lifecycleStore(),
      rail: new SandboxRail(documentClient(), TABLE, clock, { settlementSeconds: 0, holdSeconds: 300 }),
      workflow,
      announcer,
      clock,
      settings: { ...DEFAULT_LIFECYCLE_SETTINGS, pollMaxAttempts: 4 },
      events: operationsEventPublisher(),
    },
    options,
  );

const failingStarter: WorkflowStarter = {
  start: async () => {
    throw new Error('Step Functions unavailable');
  },
};

const failingAnnouncer: PendingAnnouncer = {
  announce: async () => {
    throw new Error('Lambda unavailable');
  },
};

describe('the reconciler', () => {
  it('starts the workflow of a transfer whose start failed, once it is due, and only then', async () => {
    const { runner, executions } = await startRunner();
    const paymentId = await initiate(failingStarter);
    expect((await stored(paymentId)).status).toBe('Received');

    const early = await reconcileAt(at(new Date()), runner);
    expect(early.started).toBe(0);

    const report = await reconcileAt(at(later(125)), runner);
    expect(report).toMatchObject({ started: 1, failed: 0 });
    await runner.idle();
    expect((await stored(paymentId)).status).toBe('AcceptedSettlementCompleted');
    expect(executionsOf(executions, paymentId)).toMatchObject([
      { trigger: 'recovery', name: expect.stringMatching(/-r1$/) },
    ]);

    // Final and published: it left the index, nothing is found for it again.
    const after = await reconcileAt(at(later(3600)), runner, { everything: true });
    expect(after.found).toBe(0);
  });

  it('publishes the change to Pending of a held transfer whose announcement was lost, with no execution, then looks again at its expiry', async () => {
    const { runner, executions } = await startRunner();
    const expiresAt = later(86_400).toISOString();
    const approval = { rule: 'EUR payments', approvalsRequired: 2, approvals: [], expiresAt };
    // Initiated with no announcer: as if its announcement was lost.
    const paymentId = await initiate(failingStarter, {}, undefined, approval);
    expect((await stored(paymentId)).status).toBe('Pending');
    expect(await publishedEvents(paymentId)).toEqual([]);

    expect((await reconcileAt(at(new Date()), runner)).found).toBe(0);
    // The announcement refused: still due, for the next run (not deferred to its expiry).
    const refused = await reconcileAt(at(later(125)), runner, {}, lifecycleStore(), failingAnnouncer);
    expect(refused).toMatchObject({ found: 1, failed: 1, deferred: 0 });
    const report = await reconcileAt(at(later(125)), runner);
    expect(report).toMatchObject({ found: 1, deferred: 1 });
    await runner.idle();
    // Published for approvers to hear of; still waiting, due again when the approval expires.
    expect((await publishedEvents(paymentId)).map((event) => event.detail.status)).toEqual(['Pending']);
    const held = await stored(paymentId);
    expect(held).toMatchObject({ status: 'Pending', publishedCount: 1, nextCheckAt: expiresAt });
    // No workflow ran for it while it waits.
    expect(executionsOf(executions, paymentId)).toEqual([]);
  });

  it('asks clearing about a handed-over transfer and starts nothing while clearing is pending', async () => {
    const { runner, executions } = await startRunner();
    const paymentId = await initiate(runner, { debtorAccountId: 'acc-hold' });
    await runner.idle();
    const handedOver = await stored(paymentId);
    expect(handedOver.status).toBe('AcceptedSettlementInProcess');

    // Due, but clearing holds it for 300 s: looked at again later, no execution.
    const pending = await reconcileAt(at(later(100)), runner);
    expect(pending).toMatchObject({ found: 1, deferred: 1, started: 0 });
    expect(Date.parse((await stored(paymentId)).nextCheckAt as string)).toBeGreaterThan(
      Date.parse(handedOver.nextCheckAt as string),
    );

    // Once clearing has settled it, one execution applies the outcome.
    const settled = await reconcileAt(at(later(3600)), runner);
    expect(settled).toMatchObject({ found: 1, started: 1 });
    await runner.idle();
    expect((await stored(paymentId)).status).toBe('AcceptedSettlementCompleted');
    expect(executionsOf(executions, paymentId).map((execution) => execution.trigger)).toEqual([
      'initiation',
      'recovery',
    ]);
  });

  it('leaves a transfer to the execution waiting its turn for it: not read, claimed or counted as an attempt', async () => {
    // A busy local machine: executions queue for a slot, past the time the transfer was due by.
    const { runner: busy } = await startRunner({ maxRunning: 0, maxRunningWhenQuiet: 0 });
    try {
      const paymentId = await initiate(busy);
      const initiated = await stored(paymentId);
      expect(busy.isDriving({ tenant: initiated.tenant, paymentId })).toBe(true);

      const report = await reconcileAt(at(later(125)), busy);
      expect(report).toMatchObject({ found: 1, driven: 1, started: 0, stuck: 0 });
      const left = await stored(paymentId);
      expect(left.stalledAttempts).toBeUndefined();
      expect(left.nextCheckAt).toBe(initiated.nextCheckAt);

      // Where no execution drives it, the same due transfer is claimed and started.
      const { runner } = await startRunner();
      expect(await reconcileAt(at(later(125)), runner)).toMatchObject({ found: 1, driven: 0, started: 1 });
      await runner.idle();
      expect((await stored(paymentId)).status).toBe('AcceptedSettlementCompleted');
    } finally {
      await busy.stop();
    }
  });

  it('after a restart, drives every unfinished transfer on, due or not', async () => {
    const { runner } = await startRunner();
    const paymentId = await initiate(undefined);
    const report = await reconcileAt(at(new Date()), runner, { everything: true });
    expect(report.started).toBeGreaterThanOrEqual(1);
    await runner.idle();
    expect((await stored(paymentId)).status).toBe('AcceptedSettlementCompleted');
  });

  it('emits how many transfers it found as a metric', async () => {
    const { runner } = await startRunner();
    await initiate(undefined);
    const addMetric = vi.spyOn(metrics, 'addMetric');
    const handler = reconcile(() => ({
      ...workflowDependencies(),
      workflow: runner,
      announcer: publishingAnnouncer,
      events: operationsEventPublisher(),
    }));
    const report = await handler({ everything: true });
    await runner.idle();
    expect(report.found).toBeGreaterThanOrEqual(1);
    expect(addMetric).toHaveBeenCalledWith('TransfersNeedingRecovery', 'Count', report.found);
  });

  it('settles each transfer once when two runs go at once: only one of them claims it', async () => {
    const { runner, executions } = await startRunner();
    const paymentIds = await Promise.all(Array.from({ length: 8 }, () => initiate(failingStarter)));
    // Both runs read the due transfers before either claims one, as two overlapping scheduled
    // invocations can: only the claim can keep them from both starting a transfer.
    let arrived = 0;
    let bothRead: () => void = () => undefined;
    const barrier = new Promise<void>((resolve) => {
      bothRead = resolve;
    });
    const readingTogether = (): RecoveryQueue => {
      const store = lifecycleStore();
      return {
        due: async (before, limit) => {
          const candidates: RecoveryCandidate[] = await store.due(before, limit);
          if (++arrived === 2) bothRead();
          await barrier;
          return candidates;
        },
        claim: (candidate, nextCheckAt) => store.claim(candidate, nextCheckAt),
        defer: (candidate, nextCheckAt) => store.defer(candidate, nextCheckAt),
        countParked: () => store.countParked(),
        realign: (now) => store.realign(now),
      };
    };
    const clock = at(later(125));
    const [first, second] = await Promise.all([
      reconcileAt(clock, runner, {}, readingTogether()),
      reconcileAt(clock, runner, {}, readingTogether()),
    ]);
    await runner.idle();

    expect(first.found).toBeGreaterThanOrEqual(paymentIds.length);
    expect(second.found).toBe(first.found);
    for (const paymentId of paymentIds) {
      expect(executionsOf(executions, paymentId), paymentId).toHaveLength(1);
      expect((await stored(paymentId)).status).toBe('AcceptedSettlementCompleted');
    }
    expect(first.started + second.started).toBe(executions.length);
  });
});

describe('the reconciler and batch outcomes', () => {
  /** A final transfer whose every change is published, still in the recovery index (its last write was cut short). */
  const finalAndPublished = async (batch?: { batchId: string; position: number }) => {
    const date = new Date(Date.now() - 600_000).toISOString();
    const paymentId = crypto.randomUUID();
    await lifecycleStore().create({
      tenant: 'tenant-a',
      paymentId,
      clientId: 'client-a',
      createdAt: date,
      status: 'Rejected',
      statusReason: 'InsufficientFunds',
      statusReasonCode: 'AM04',
      statusDate: date,
      requestHash: 'hash',
      servicer: {},
      transfer: { paymentMethod: 'CreditTransfer', amount: '1.00', debtorAccountId: 'acc-nofunds' },
      history: [
        { status: 'Received', date, actor: 'client-a' },
        {
          status: 'Rejected',
          statusReason: 'InsufficientFunds',
          statusReasonCode: 'AM04',
          date,
          actor: 'rail',
        },
      ],
      publishedCount: 2,
      nextCheckAt: date,
      ...(batch !== undefined && { batch }),
    });
    return paymentId;
  };

  it("starts a batch's final, published transfer again (its publish step counts it toward the batch), and only marks a lone one published", async () => {
    const lone = await finalAndPublished();
    const ofBatch = await finalAndPublished({ batchId: crypto.randomUUID(), position: 0 });
    const started: string[] = [];
    const recorder: WorkflowStarter = {
      start: async (start) => {
        started.push(start.paymentId);
      },
    };
    await reconcileAt(at(later(0)), recorder);
    expect(started).toContain(ofBatch);
    expect(started).not.toContain(lone);
    expect((await stored(lone)).nextCheckAt).toBeUndefined();
    expect((await stored(ofBatch)).nextCheckAt).toBeDefined();
  });
});
