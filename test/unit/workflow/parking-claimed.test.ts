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
  unparkCreditTransfer,
} from '#domain/credit-transfers/parked-transfers';
import type { WorkflowStarter } from '#domain/credit-transfers/ports';
import { reconcileCreditTransfers } from '#domain/credit-transfers/reconcile-credit-transfers';
import {
  initiate,
  lifecycleStore,
  publishingAnnouncer,
  startRunner,
  startWorkflowEnvironment,
  stored,
  TABLE,
  TENANT,
} from './harness.ts';

/**
 * An operator's rejection (`npm run transfers -- reject`) rests on the read that showed the
 * transfer parked and never submitted to clearing; its write names both. Here the transfer was
 * submitted to clearing after that read, still parked in the same status: the rejection must
 * write nothing, or clearing could pay a transfer the client is told was rejected.
 */
let environment: Awaited<ReturnType<typeof startWorkflowEnvironment>>;

beforeAll(async () => {
  environment = await startWorkflowEnvironment();
});

afterAll(async () => {
  await environment?.close();
});

let hour = 0;
const nextRunClock = (): Clock => {
  hour += 1;
  const date = new Date(Date.now() + hour * 3_600_000);
  return { now: () => date };
};

const reconcileOnce = (workflow: WorkflowStarter) => {
  const clock = nextRunClock();
  return reconcileCreditTransfers({
    queue: lifecycleStore(),
    store: lifecycleStore(),
    rail: new SandboxRail(documentClient(), TABLE, clock, { settlementSeconds: 0, holdSeconds: 300 }),
    workflow,
    announcer: publishingAnnouncer,
    clock,
    settings: { ...DEFAULT_LIFECYCLE_SETTINGS, pollMaxAttempts: 4 },
    events: new JsonLinesOperationsEventPublisher(process.env.EVENTS_FILE as string),
  });
};

const alwaysFails = async (): Promise<never> => {
  throw new Error('clearing cannot be asked');
};

/** A transfer parked after clearing has it (its polls fail on every attempt). */
const parkedAfterSubmission = async () => {
  const { runner } = await startRunner({ taskOverrides: { PollClearing: alwaysFails } });
  const paymentId = await initiate(runner);
  await runner.idle();
  for (let run = 0; run < DEFAULT_LIFECYCLE_SETTINGS.maxAttempts + 3; run++) {
    if ((await stored(paymentId)).parked !== undefined) break;
    await reconcileOnce(runner);
    await runner.idle();
  }
  return paymentId;
};

/** The real store, except that its read answers what the operator saw. */
const storeThatRead = (seen: Awaited<ReturnType<typeof stored>>): ReturnType<typeof lifecycleStore> =>
  Object.assign(Object.create(lifecycleStore()), { get: async () => seen });

const operator = { clock: { now: () => new Date() } };

describe("an operator's rejection of a parked transfer", () => {
  it('writes nothing when the transfer was submitted to clearing since the operator read it', async () => {
    const paymentId = await parkedAfterSubmission();
    const now = await stored(paymentId);
    expect(now).toMatchObject({ status: 'AcceptedSettlementInProcess', parked: expect.anything() });
    expect(now.submittedAt).toBeDefined();

    // What the operator read: parked in this status, not yet submitted to clearing.
    const { submittedAt: _notYet, ...seen } = now;
    await expect(
      rejectParkedCreditTransfer(
        { ...operator, store: storeThatRead(seen as typeof now) },
        { tenant: TENANT, paymentId, actor: 'local:operator' },
      ),
    ).rejects.toBeInstanceOf(ParkedTransferMovedError);
    expect(await stored(paymentId)).toMatchObject({
      status: 'AcceptedSettlementInProcess',
      parked: expect.anything(),
      submittedAt: now.submittedAt,
    });
  });

  it('writes nothing when the transfer was given back to the reconciler since the operator read it parked', async () => {
    const paymentId = await parkedAfterSubmission();
    const seen = await stored(paymentId);
    await unparkCreditTransfer({ parked: lifecycleStore(), clock: operator.clock }, TENANT, paymentId);
    await expect(
      rejectParkedCreditTransfer(
        { ...operator, store: storeThatRead(seen) },
        { tenant: TENANT, paymentId, actor: 'local:operator', notInClearing: true },
      ),
    ).rejects.toBeInstanceOf(ParkedTransferMovedError);
    const after = await stored(paymentId);
    expect(after.status).toBe('AcceptedSettlementInProcess');
    expect(after.parked).toBeUndefined();
  });

  it('rejects a transfer submitted to clearing once the bank confirmed clearing does not have it', async () => {
    const paymentId = await parkedAfterSubmission();
    expect((await stored(paymentId)).submittedAt).toBeDefined();
    const rejected = await rejectParkedCreditTransfer(
      { ...operator, store: lifecycleStore() },
      { tenant: TENANT, paymentId, actor: 'local:operator', notInClearing: true },
    );
    expect(rejected).toMatchObject({ status: 'Rejected', statusReason: OPERATOR_REJECTION_REASON });
    expect(rejected.parked).toBeUndefined();
  });
});
