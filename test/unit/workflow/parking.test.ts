import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
});

import { documentClient } from '#adapters/aws/dynamodb-client';
import { JsonLinesOperationsEventPublisher } from '#adapters/credit-transfers/operations-event-publisher';
import { SandboxRail } from '#adapters/credit-transfers/sandbox-rail';
import type { Clock } from '#domain/commons/ports';
import { DEFAULT_LIFECYCLE_SETTINGS } from '#domain/credit-transfers/lifecycle-settings';
import {
  OPERATOR_REJECTION_REASON,
  ParkedTransferMovedError,
  rejectParkedCreditTransfer,
  SubmittedToClearingError,
  TRANSFER_PARKED_EVENT,
  TransferNotParkedError,
  unparkCreditTransfer,
} from '#domain/credit-transfers/parked-transfers';
import type { WorkflowStarter } from '#domain/credit-transfers/ports';
import {
  type ReconcileReport,
  reconcileCreditTransfers,
} from '#domain/credit-transfers/reconcile-credit-transfers';
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
  TENANT,
} from './harness.ts';

let environment: Awaited<ReturnType<typeof startWorkflowEnvironment>>;

beforeAll(async () => {
  environment = await startWorkflowEnvironment();
});

afterAll(async () => {
  await environment?.close();
});

const MAX_ATTEMPTS = DEFAULT_LIFECYCLE_SETTINGS.maxAttempts;

/** Each run an hour after the last, so whatever the previous run claimed is due again. */
let hour = 0;
const nextRunClock = (): Clock => {
  hour += 1;
  const date = new Date(Date.now() + hour * 3_600_000);
  return { now: () => date };
};

const reconcileOnce = (workflow: WorkflowStarter, clock: Clock = nextRunClock()): Promise<ReconcileReport> =>
  reconcileCreditTransfers({
    queue: lifecycleStore(),
    store: lifecycleStore(),
    rail: new SandboxRail(documentClient(), TABLE, clock, { settlementSeconds: 0, holdSeconds: 300 }),
    workflow,
    announcer: publishingAnnouncer,
    clock,
    settings: { ...DEFAULT_LIFECYCLE_SETTINGS, pollMaxAttempts: 4 },
    events: new JsonLinesOperationsEventPublisher(process.env.EVENTS_FILE as string),
  });

const parkedEvents = async (paymentId: string) => {
  const text = await readFile(process.env.EVENTS_FILE as string, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { 'detail-type': string; detail: { paymentId: string } })
    .filter(
      (event) => event['detail-type'] === TRANSFER_PARKED_EVENT && event.detail.paymentId === paymentId,
    );
};

class ConnectorDownError extends Error {
  constructor() {
    super('connector down');
    this.name = 'ConnectorDownError';
  }
}

const alwaysFails = async (): Promise<never> => {
  throw new ConnectorDownError();
};

/** Runs the reconciler (and the executions it starts) until the transfer is parked; the reports. */
const driveUntilParked = async (
  runner: Awaited<ReturnType<typeof startRunner>>['runner'],
  paymentId: string,
): Promise<ReconcileReport[]> => {
  const reports: ReconcileReport[] = [];
  for (let run = 0; run < MAX_ATTEMPTS + 3 && (await stored(paymentId)).parked === undefined; run++) {
    reports.push(await reconcileOnce(runner));
    await runner.idle();
  }
  return reports;
};

describe('a transfer whose step fails on every attempt', () => {
  it('is parked after the last attempt: status unchanged, one event, never started again', async () => {
    const { runner, executions } = await startRunner({
      taskOverrides: { ValidateCheckAndSubmit: alwaysFails },
    });
    const paymentId = await initiate(runner);
    await runner.idle();
    const reports = await driveUntilParked(runner, paymentId);

    const parked = await stored(paymentId);
    expect(parked.status).toBe('Received');
    expect(parked.parked).toMatchObject({ attempts: MAX_ATTEMPTS, reason: 'ConnectorDownError' });
    // Exactly the bounded number of executions, each failed by the catch-all, not silently.
    expect(executionsOf(executions, paymentId)).toHaveLength(MAX_ATTEMPTS);
    expect(executionsOf(executions, paymentId).every((execution) => execution.status === 'FAILED')).toBe(
      true,
    );
    expect(reports.reduce((sum, report) => sum + report.started, 0)).toBe(MAX_ATTEMPTS - 1);

    // Later runs leave it alone: nothing started, nothing counted stuck, the parked gauge stays up.
    for (let run = 0; run < 3; run++) {
      const later = await reconcileOnce(runner);
      expect(later).toMatchObject({ started: 0, stuck: 0, parked: 0 });
      expect(later.parkedInAll).toBeGreaterThanOrEqual(1);
    }
    await runner.idle();
    expect(executionsOf(executions, paymentId)).toHaveLength(MAX_ATTEMPTS);
    // One announcement in all: the page goes out once.
    expect(await parkedEvents(paymentId)).toHaveLength(1);
    expect((await lifecycleStore().parked(100)).map((record) => record.paymentId)).toContain(paymentId);
  });

  it('whose executions are lost is parked by the reconciler with NoProgress', async () => {
    const lost: WorkflowStarter = { start: async () => undefined };
    const paymentId = await initiate(lost);
    const reports: ReconcileReport[] = [];
    for (let run = 0; run < MAX_ATTEMPTS + 2; run++) reports.push(await reconcileOnce(lost));
    expect(reports.reduce((sum, report) => sum + report.started, 0)).toBe(MAX_ATTEMPTS - 1);
    expect(reports.reduce((sum, report) => sum + report.parked, 0)).toBe(1);
    expect((await stored(paymentId)).parked).toMatchObject({ reason: 'NoProgress', attempts: MAX_ATTEMPTS });
    expect(await parkedEvents(paymentId)).toHaveLength(1);
  });

  it('is retried by an operator: a new round of attempts, and it completes once the step works', async () => {
    const failing = await startRunner({ taskOverrides: { ValidateCheckAndSubmit: alwaysFails } });
    const paymentId = await initiate(failing.runner);
    await failing.runner.idle();
    await driveUntilParked(failing.runner, paymentId);
    expect((await stored(paymentId)).parked).toBeDefined();

    await unparkCreditTransfer(
      { parked: lifecycleStore(), clock: { now: () => new Date() } },
      TENANT,
      paymentId,
    );
    const retried = await stored(paymentId);
    expect(retried.parked).toBeUndefined();
    expect(retried.stalledAttempts).toBeUndefined();

    const working = await startRunner();
    const report = await reconcileOnce(working.runner);
    expect(report.started).toBeGreaterThanOrEqual(1);
    await working.runner.idle();
    expect((await stored(paymentId)).status).toBe('AcceptedSettlementCompleted');
    await expect(
      unparkCreditTransfer({ parked: lifecycleStore(), clock: { now: () => new Date() } }, TENANT, paymentId),
    ).rejects.toBeInstanceOf(TransferNotParkedError);
  });

  it('is rejected by an operator with a reason, and its client is told by a status event', async () => {
    const { runner } = await startRunner({ taskOverrides: { ValidateCheckAndSubmit: alwaysFails } });
    const paymentId = await initiate(runner);
    await runner.idle();
    await driveUntilParked(runner, paymentId);

    const rejected = await rejectParkedCreditTransfer(
      { store: lifecycleStore(), clock: { now: () => new Date() } },
      { tenant: TENANT, paymentId, actor: 'local:operator' },
    );
    expect(rejected).toMatchObject({ status: 'Rejected', statusReason: OPERATOR_REJECTION_REASON });
    expect(rejected.parked).toBeUndefined();
    expect(rejected.history.at(-1)).toMatchObject({ status: 'Rejected', actor: 'local:operator' });

    // The reconciler has the change published by an execution (the first step finds it final).
    const working = await startRunner();
    await reconcileOnce(working.runner, { now: () => new Date(Date.now() + 1000) });
    await working.runner.idle();
    expect((await publishedEvents(paymentId)).map((event) => event.detail.status)).toContain('Rejected');
  });

  it('cannot be rejected once it settled, even when the operator read it parked just before', async () => {
    const { runner } = await startRunner({ taskOverrides: { PollClearing: alwaysFails } });
    const paymentId = await initiate(runner);
    await runner.idle();
    await driveUntilParked(runner, paymentId);
    const seen = await stored(paymentId);
    expect(seen).toMatchObject({ status: 'AcceptedSettlementInProcess', parked: expect.anything() });
    expect(seen.submittedAt).toBeDefined();

    // Submitted to clearing: not without the bank's word that clearing does not have it.
    const operator = { store: lifecycleStore(), clock: { now: () => new Date() } };
    await expect(
      rejectParkedCreditTransfer(operator, { tenant: TENANT, paymentId, actor: 'local:operator' }),
    ).rejects.toBeInstanceOf(SubmittedToClearingError);

    // Meanwhile it is retried and settles; the operator's decision still rests on the parked read.
    await unparkCreditTransfer(
      { parked: lifecycleStore(), clock: { now: () => new Date() } },
      TENANT,
      paymentId,
    );
    const working = await startRunner();
    await reconcileOnce(working.runner, { now: () => new Date(Date.now() + 1000) });
    await working.runner.idle();
    expect((await stored(paymentId)).status).toBe('AcceptedSettlementCompleted');

    // The real store, except that its read answers what the operator saw.
    const stale: ReturnType<typeof lifecycleStore> = Object.assign(Object.create(lifecycleStore()), {
      get: async () => seen,
    });
    await expect(
      rejectParkedCreditTransfer(
        { store: stale, clock: { now: () => new Date() } },
        { tenant: TENANT, paymentId, actor: 'local:operator', notInClearing: true },
      ),
    ).rejects.toBeInstanceOf(ParkedTransferMovedError);
    expect((await stored(paymentId)).status).toBe('AcceptedSettlementCompleted');
  });
});

describe('a status change that leaves the recovery check where it is', () => {
  it('is refused while the transfer is parked (it would leave it unparked in the parked partition), and made once it names a check', async () => {
    const paymentId = await initiate(undefined);
    const store = lifecycleStore();
    const at = new Date().toISOString();
    expect(await store.park(TENANT, paymentId, 'Received', { at, reason: 'NoProgress', attempts: 1 })).toBe(
      true,
    );
    const change = { status: 'AcceptedTechnicalValidation' as const, date: at, actor: 'workflow' };
    expect(await store.transition(TENANT, paymentId, { from: 'Received', change })).toBeUndefined();
    expect((await stored(paymentId)).parked).toBeDefined();

    const moved = await store.transition(TENANT, paymentId, {
      from: 'Received',
      change,
      nextCheckAt: new Date(),
    });
    expect(moved?.parked).toBeUndefined();
    expect(moved?.status).toBe('AcceptedTechnicalValidation');
    expect((await store.due(new Date(Date.now() + 1000), 10_000)).map((c) => c.paymentId)).toContain(
      paymentId,
    );
  });
});
