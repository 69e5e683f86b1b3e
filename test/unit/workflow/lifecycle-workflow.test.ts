import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  // Injected failures are logged by the task wrapper; the assertions say what matters.
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
});

import { documentClient } from '#adapters/aws/dynamodb-client';
import { DynamoDbCreditTransferStore } from '#adapters/credit-transfers/credit-transfer-store';
import { JsonLinesStatusEventPublisher } from '#adapters/credit-transfers/event-publisher-local';
import { SandboxRail } from '#adapters/credit-transfers/sandbox-rail';
import { PaymentNotCancellableError } from '#domain/commons/errors';
import { systemClock } from '#domain/commons/ports';
import { cancelCreditTransfer } from '#domain/credit-transfers/cancel-credit-transfer';
import { IllegalStatusTransitionError } from '#domain/credit-transfers/lifecycle';
import {
  pollClearing,
  toStatusChangedEvent,
  validateCheckAndSubmit,
} from '#domain/credit-transfers/lifecycle-steps';
import type { Rail, RailPayment } from '#domain/credit-transfers/ports';
import { withInvocationDeadline } from '#shared/deadline';
import { lifecycleSettings } from '#workflow/dependencies';
import { handler as pollClearingHandler } from '#workflow/poll-clearing';
import { handler as publishHandler } from '#workflow/publish-status-events';
import { lifecycleTask } from '#workflow/task';
import { handler as validateHandler } from '#workflow/validate-check-and-submit';
import { markApiRequest } from '../../../scripts/local/api-activity.ts';
import type { ExecutionSummary } from '../../../scripts/local/workflow-runner.ts';
import {
  CLIENT,
  clearingRecord,
  eventually,
  executionsOf,
  initiate,
  lifecycleStore,
  publishedEvents,
  reach,
  startRunner,
  startWorkflowEnvironment,
  statusesOf,
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

const cancel = (
  paymentId: string,
  workflow: Parameters<typeof cancelCreditTransfer>[0]['workflow'],
  reason?: string,
) =>
  cancelCreditTransfer(
    { store: lifecycleStore(), clock: systemClock, workflow },
    {
      tenant: TENANT,
      clientId: 'client-b',
      paymentId,
      body: reason === undefined ? undefined : { cancellationReason: reason },
      servicer: {},
    },
  );

/** What sandbox clearing did with the payment. */
const clearingState = async (paymentId: string): Promise<string> => {
  const record = await clearingRecord(paymentId);
  if (record === undefined) return 'never submitted';
  if (record.recalledAt !== undefined) return 'recalled';
  return record.settledAt !== undefined ? 'settled' : 'pending';
};

/** Every execution of the transfer ran (one per trigger) and succeeded. */
const expectAllSucceeded = (executions: ExecutionSummary[], paymentId: string, triggers: string[]) => {
  const ran = executionsOf(executions, paymentId);
  expect(ran.map((execution) => execution.trigger).sort()).toEqual([...triggers].sort());
  expect(ran.filter((execution) => execution.status !== 'SUCCEEDED')).toEqual([]);
};

/** Until the transfer's cancellation execution has finished. */
const cancellationFinished = (executions: ExecutionSummary[], paymentId: string) =>
  eventually(() =>
    executionsOf(executions, paymentId).some((execution) => execution.trigger === 'cancellation'),
  );

/**
 * The sandbox rail, running `hook` once, just before the first customer-profile check or the first
 * submission (`at`) reaches the rail.
 */
const railWithHook = (
  at: 'checkCustomerProfile' | 'submit',
  hook: (payment: RailPayment) => Promise<void>,
): Rail => {
  const sandbox = new SandboxRail(documentClient(), TABLE, systemClock);
  let hooked = false;
  const once = async (payment: RailPayment) => {
    if (!hooked) {
      hooked = true;
      await hook(payment);
    }
  };
  return {
    checkCustomerProfile: async (payment) => {
      if (at === 'checkCustomerProfile') await once(payment);
      return sandbox.checkCustomerProfile(payment);
    },
    clearingStatus: (payment) => sandbox.clearingStatus(payment),
    recall: (payment) => sandbox.recall(payment),
    submit: async (payment) => {
      if (at === 'submit') await once(payment);
      return sandbox.submit(payment);
    },
  };
};

/** The first Task state's handler, with the given rail. */
const firstStepWith = (rail: Rail) =>
  lifecycleTask('validateCheckAndSubmit', (state) =>
    validateCheckAndSubmit(
      { store: lifecycleStore(), clock: systemClock, settings: lifecycleSettings(), rail },
      state,
    ),
  );

const tomorrow = () => new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);

const SETTLED = [
  'Received',
  'AcceptedTechnicalValidation',
  'AcceptedCustomerProfile',
  'AcceptedSettlementInProcess',
  'AcceptedSettlementCompleted',
];

describe('the lifecycle ASL, run with its real task handlers', () => {
  it('settles an ordinary transfer through every status, in 7 state transitions, publishing each change once', async () => {
    const { runner, executions } = await startRunner();
    const paymentId = await initiate(runner);
    await runner.idle();

    const record = await stored(paymentId);
    expect(record.status).toBe('AcceptedSettlementCompleted');
    expect(record.statusReason).toBeUndefined();
    expect(statusesOf(record)).toEqual(SETTLED);
    expect(record.history.map((entry) => entry.actor)).toEqual([CLIENT, 'workflow', 'rail', 'rail', 'rail']);
    expect(record.statusDate).toBe(record.history.at(-1)?.date);

    const events = await publishedEvents(paymentId);
    expect(events.map((event) => event.detail.status)).toEqual(SETTLED);
    expect(events.map((event) => event.detail.sequence)).toEqual([0, 1, 2, 3, 4]);
    expect(events.map((event) => event.detail.previousStatus)).toEqual([undefined, ...SETTLED.slice(0, 4)]);
    expect(new Set(events.map((event) => event.id)).size).toBe(5);
    expect(events.every((event) => event['detail-type'] === 'CreditTransferStatusChanged')).toBe(true);

    // Final and fully published: out of the recovery index.
    expect(record.publishedCount).toBe(5);
    expect(record.nextCheckAt).toBeUndefined();
    expect(executionsOf(executions, paymentId)).toMatchObject([
      { status: 'SUCCEEDED', transitions: 7, retries: 0 },
    ]);
  });

  it.each([
    ['acc-blocked', 'BlockedAccount', 'AC06'],
    ['acc-closed', 'ClosedAccountNumber', 'AC04'],
    ['acc-nofunds', 'InsufficientFunds', 'AM04'],
    ['acc-forbidden', 'TransactionForbidden', 'AG01'],
    ['acc-sanctioned', 'RegulatoryReason', 'RR04'],
  ])(
    'rejects a transfer from %s at the customer profile with %s (%s)',
    async (debtorAccountId, reason, code) => {
      const { runner, executions } = await startRunner();
      const paymentId = await initiate(runner, { debtorAccountId });
      await runner.idle();

      const record = await stored(paymentId);
      expect(record.status).toBe('Rejected');
      expect(record.statusReason).toBe(reason);
      expect(record.statusReasonCode).toBe(code);
      expect(statusesOf(record)).toEqual(['Received', 'AcceptedTechnicalValidation', 'Rejected']);
      expect(record.history.at(-1)).toMatchObject({
        statusReason: reason,
        statusReasonCode: code,
        actor: 'rail',
      });
      expect((await publishedEvents(paymentId)).at(-1)?.detail).toMatchObject({
        statusReason: reason,
        statusReasonCode: code,
      });
      expect((await publishedEvents(paymentId)).map((event) => event.detail.status)).toEqual(
        statusesOf(record),
      );
      expect(record.nextCheckAt).toBeUndefined();
      expect(executionsOf(executions, paymentId)).toMatchObject([{ status: 'SUCCEEDED', transitions: 3 }]);
    },
  );

  it('rejects at technical validation a stored transfer that cannot be processed', async () => {
    const { runner } = await startRunner();
    const now = new Date().toISOString();
    const paymentId = 'zero-amount-transfer';
    await new DynamoDbCreditTransferStore(documentClient(), TABLE).create({
      tenant: TENANT,
      paymentId,
      clientId: CLIENT,
      createdAt: now,
      status: 'Received',
      statusDate: now,
      requestHash: 'x',
      servicer: {},
      transfer: { paymentMethod: 'CreditTransfer', amount: '0.00', debtorAccountId: 'acc-1' },
      history: [{ status: 'Received', date: now, actor: CLIENT }],
    });
    await runner.start({ tenant: TENANT, paymentId, trigger: 'initiation' });
    await runner.idle();
    const record = await stored(paymentId);
    expect(record.status).toBe('Rejected');
    expect(record.statusReason).toBe('ZeroAmount');
    expect(record.statusReasonCode).toBe('AM01');
    expect(record.history.at(-1)?.actor).toBe('workflow');
  });

  it('holds a -hold transfer before settlement, and a cancellation received meanwhile wins', async () => {
    const { runner, executions } = await startRunner();
    const paymentId = await initiate(runner, { debtorAccountId: 'acc-hold' });
    await reach(paymentId, 'AcceptedSettlementInProcess');

    const accepted = await cancel(paymentId, runner, 'Duplicate order');
    expect(accepted.creditTransfer.status).toBe('AcceptedSettlementInProcess');
    await runner.idle();

    const record = await stored(paymentId);
    expect(record.status).toBe('Cancelled');
    expect(record.statusReason).toBe('RequestedByCustomer');
    expect(statusesOf(record)).toEqual([...SETTLED.slice(0, 4), 'Cancelled']);
    expect(record.history.at(-1)?.actor).toBe('client-b');
    expect(record.cancellation).toMatchObject({ reason: 'Duplicate order', clientId: 'client-b' });
    expect(await clearingState(paymentId)).toBe('recalled');
    expect((await publishedEvents(paymentId)).at(-1)?.detail).toMatchObject({
      status: 'Cancelled',
      statusReason: 'RequestedByCustomer',
      statusReasonCode: 'CUST',
    });
    // The cancellation ran an execution of its own; neither failed.
    expect(
      executionsOf(executions, paymentId)
        .map((execution) => execution.trigger)
        .sort(),
    ).toEqual(['cancellation', 'initiation']);
    expect(executionsOf(executions, paymentId).every((execution) => execution.status === 'SUCCEEDED')).toBe(
      true,
    );
  });

  it('cancels a transfer during its value-date hold; the held execution wakes and ends cleanly', async () => {
    const { runner, executions } = await startRunner({
      taskOverrides: {
        // The hold has begun: the cancellation's own execution ends the transfer meanwhile.
        PublishBeforeHandOver: async (input) => {
          const result = await publishHandler(input);
          const { paymentId } = input as { paymentId: string };
          await cancel(paymentId, runner);
          await cancellationFinished(executions, paymentId);
          return result;
        },
      },
    });
    const paymentId = await initiate(runner, { valueDate: tomorrow() });
    await runner.idle();

    const record = await stored(paymentId);
    expect(statusesOf(record)).toEqual([...SETTLED.slice(0, 3), 'Cancelled']);
    expect(await clearingState(paymentId)).toBe('never submitted');
    // The fast path, the hold it handed over, and the cancellation's fast path.
    expectAllSucceeded(executions, paymentId, ['initiation', 'initiation', 'cancellation']);
    expect(
      executionsOf(executions, paymentId)
        .map((execution) => execution.type)
        .sort(),
    ).toEqual(['EXPRESS', 'EXPRESS', 'STANDARD']);
    expect((await publishedEvents(paymentId)).map((event) => event.detail.status)).toEqual(
      statusesOf(record),
    );
    expect(record.nextCheckAt).toBeUndefined();
  });

  it.each([
    ['its own execution', true],
    ['the submission step', false],
  ])(
    'cancels a transfer whose cancellation arrives during the customer-profile check, before the write that claims the submission, applied by %s',
    async (_, ownExecution) => {
      const rail = railWithHook('checkCustomerProfile', async (payment) => {
        await cancel(payment.paymentId, ownExecution ? runner : undefined);
        if (ownExecution) await cancellationFinished(executions, payment.paymentId);
      });
      const { runner, executions } = await startRunner({
        taskOverrides: { ValidateCheckAndSubmit: firstStepWith(rail) },
      });
      const paymentId = await initiate(runner);
      await runner.idle();

      // Validation is recorded with the check's outcome, in the write the cancellation refuses.
      expect(statusesOf(await stored(paymentId))).toEqual(['Received', 'Cancelled']);
      expect(await clearingState(paymentId)).toBe('never submitted');
      expectAllSucceeded(
        executions,
        paymentId,
        ownExecution ? ['initiation', 'cancellation'] : ['initiation'],
      );
    },
  );

  it.each([
    ['acc-hold', 'Cancelled', 'recalled'],
    ['acc-001', 'AcceptedSettlementCompleted', 'settled'],
  ])(
    'a cancellation of %s arriving once submission is claimed goes through clearing: %s, clearing %s',
    async (debtorAccountId, status, clearing) => {
      // The cancellation is recorded, and its execution runs, right before the payment reaches clearing.
      const rail = railWithHook('submit', async (payment) => {
        await cancel(payment.paymentId, runner);
        await cancellationFinished(executions, payment.paymentId);
      });
      const { runner, executions } = await startRunner({
        taskOverrides: { ValidateCheckAndSubmit: firstStepWith(rail) },
      });
      const paymentId = await initiate(runner, { debtorAccountId });
      await runner.idle();

      // The status says what clearing did: never Cancelled while clearing has the payment.
      const record = await stored(paymentId);
      expect({ status: record.status, clearing: await clearingState(paymentId) }).toEqual({
        status,
        clearing,
      });
      expect(statusesOf(record)).toEqual([...SETTLED.slice(0, 4), status]);
      expectAllSucceeded(executions, paymentId, ['initiation', 'cancellation']);
    },
  );

  it('cancels a transfer whose cancellation arrived before any step ran', async () => {
    const { runner } = await startRunner();
    const paymentId = await initiate(undefined);
    await cancel(paymentId, undefined);
    await runner.start({ tenant: TENANT, paymentId, trigger: 'initiation' });
    await runner.idle();
    const record = await stored(paymentId);
    expect(statusesOf(record)).toEqual(['Received', 'Cancelled']);
  });

  it('refuses to cancel a settled transfer: settlement stands', async () => {
    const { runner } = await startRunner();
    const paymentId = await initiate(runner);
    await runner.idle();
    await expect(cancel(paymentId, runner)).rejects.toBeInstanceOf(PaymentNotCancellableError);
    expect((await stored(paymentId)).status).toBe('AcceptedSettlementCompleted');
  });

  it('lets settlement stand when the cancellation comes after clearing settled but before the poll saw it', async () => {
    // Clearing settles at once (SANDBOX_SETTLEMENT_SECONDS=0); the cancellation is taken just
    // before the first poll runs, whatever the machine's speed: the recall is too late.
    let cancelled = false;
    const { runner } = await startRunner({
      taskOverrides: {
        PollClearing: async (input) => {
          if (!cancelled) {
            cancelled = true;
            const { paymentId } = input as { paymentId: string };
            await cancel(paymentId, runner);
          }
          return pollClearingHandler(input);
        },
      },
    });
    const paymentId = await initiate(runner);
    await runner.idle();
    expect(cancelled).toBe(true);
    const record = await stored(paymentId);
    expect(record.status).toBe('AcceptedSettlementCompleted');
    expect(statusesOf(record)).toEqual(SETTLED);
    expect(record.cancellation).toBeDefined();
    expect(await clearingState(paymentId)).toBe('settled');
  });

  it('retries a task that fails, and carries on', async () => {
    let failures = 0;
    const { runner, executions } = await startRunner({
      taskOverrides: {
        ValidateCheckAndSubmit: async (input) => {
          if (failures < 2) {
            failures += 1;
            throw Object.assign(new Error('clearing gateway timed out'), { name: 'TimeoutError' });
          }
          return validateHandler(input);
        },
      },
    });
    const paymentId = await initiate(runner);
    await runner.idle();
    expect((await stored(paymentId)).status).toBe('AcceptedSettlementCompleted');
    expect(executionsOf(executions, paymentId)).toMatchObject([
      { status: 'SUCCEEDED', retries: 2, transitions: 9 },
    ]);
  });

  it('re-runs a step whose result was lost after its write without moving the transfer twice', async () => {
    let lost = false;
    const { runner } = await startRunner({
      taskOverrides: {
        PollClearing: async (input) => {
          const result = await pollClearingHandler(input);
          if (!lost) {
            lost = true;
            throw Object.assign(new Error('connection reset'), { name: 'Lambda.ServiceException' });
          }
          return result;
        },
      },
    });
    const paymentId = await initiate(runner);
    await runner.idle();
    expect(statusesOf(await stored(paymentId))).toEqual(SETTLED);
  });

  it('publishes again after a publish step failed halfway; the event ids stay the same', async () => {
    let failed = false;
    const { runner } = await startRunner({
      taskOverrides: {
        PublishOutcome: async (input) => {
          if (!failed) {
            failed = true;
            // The events go out, then the step dies before it notes how far it got.
            const record = await stored((input as { paymentId: string }).paymentId);
            const from = record.publishedCount ?? 0;
            await new JsonLinesStatusEventPublisher(process.env.EVENTS_FILE as string).publish(
              record.history
                .slice(from)
                .map((entry, index) => toStatusChangedEvent(record, from + index, entry)),
            );
            throw new Error('crashed after publishing');
          }
          return publishHandler(input);
        },
      },
    });
    const paymentId = await initiate(runner);
    await runner.idle();
    const events = await publishedEvents(paymentId);
    expect(events.map((event) => event.detail.sequence)).toEqual([0, 1, 2, 3, 4, 4]);
    expect(new Set(events.map((event) => event.id)).size).toBe(5);
    expect((await stored(paymentId)).nextCheckAt).toBeUndefined();
  });

  it('fails the execution when a task keeps failing, leaving the transfer due for recovery', async () => {
    const rail = new SandboxRail(documentClient(), TABLE, systemClock);
    const { runner, executions } = await startRunner({
      taskOverrides: {
        ValidateCheckAndSubmit: firstStepWith({
          checkCustomerProfile: async () => {
            throw new Error('rail unavailable');
          },
          submit: (payment) => rail.submit(payment),
          clearingStatus: (payment) => rail.clearingStatus(payment),
          recall: (payment) => rail.recall(payment),
        }),
      },
    });
    const paymentId = await initiate(runner);
    await runner.idle();
    const record = await stored(paymentId);
    // Validation is recorded only with the check's outcome: the rail never answered.
    expect(record.status).toBe('Received');
    expect(record.nextCheckAt).toBeDefined();
    expect(executionsOf(executions, paymentId)).toMatchObject([{ status: 'FAILED', retries: 5 }]);
  });

  it('hands a transfer with a future valueDate over to the Standard machine, which holds it until that date (Wait with TimestampPath), then settles it', async () => {
    const seenBeforeHold: { input: unknown; statuses: string[] }[] = [];
    const { runner, executions } = await startRunner({
      taskOverrides: {
        PublishBeforeHandOver: async (input) => {
          const result = await publishHandler(input);
          const { paymentId } = input as { paymentId: string };
          seenBeforeHold.push({
            input,
            statuses: (await publishedEvents(paymentId)).map((event) => event.detail.status),
          });
          return result;
        },
      },
    });
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const paymentId = await initiate(runner, { valueDate: tomorrow });
    await runner.idle();
    // The Wait read its timestamp from the state: the start of the value date, UTC; the changes
    // so far were published before it.
    expect(seenBeforeHold).toEqual([
      {
        input: expect.objectContaining({ next: 'hold', holdUntil: `${tomorrow}T00:00:00Z` }),
        statuses: SETTLED.slice(0, 3),
      },
    ]);
    expect(statusesOf(await stored(paymentId))).toEqual(SETTLED);
    // The fast path up to the hand-over; the hold, the submission, the poll and the last publish
    // in the Standard execution it started, named after it.
    const [fast, waits] = executionsOf(executions, paymentId);
    expect(fast).toMatchObject({ type: 'EXPRESS', status: 'SUCCEEDED', transitions: 4 });
    expect(waits).toMatchObject({
      type: 'STANDARD',
      status: 'SUCCEEDED',
      name: `${fast?.name}-w`,
      transitions: 9,
    });
  });

  it("runs the tasks of an execution a request started without that request's deadline", async () => {
    // As the local API starts it: inside the initiation request, whose deadline passes during
    // the hold. A task that inherited it would have its first AWS call aborted, then fail.
    const { runner, executions } = await startRunner({ waitTimeOverrides: { HoldUntilValueDate: 2500 } });
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const paymentId = await withInvocationDeadline({ getRemainingTimeInMillis: () => 2000 }, () =>
      initiate(runner, { valueDate: tomorrow }),
    );
    await runner.idle();
    expect(executionsOf(executions, paymentId)).toMatchObject([
      { type: 'EXPRESS', status: 'SUCCEEDED', retries: 0 },
      { type: 'STANDARD', status: 'SUCCEEDED', retries: 0 },
    ]);
    expect(statusesOf(await stored(paymentId))).toEqual(SETTLED);
  });

  it('does not grow state transitions with how long clearing takes: bounded polls, then hand-over', async () => {
    const { runner, executions } = await startRunner();
    const paymentId = await initiate(runner, { debtorAccountId: 'acc-hold' });
    await runner.idle();
    const record = await stored(paymentId);
    expect(record.status).toBe('AcceptedSettlementInProcess');
    expect(record.nextCheckAt).toBeDefined();
    // 3 states to the first wait (its route included), 3 per poll (Wait, Poll, Choice) for 4
    // polls, then the final publish.
    expect(executionsOf(executions, paymentId)).toMatchObject([
      { status: 'SUCCEEDED', transitions: 3 + 3 * 4 + 1 },
    ]);
  });

  it('hands clearing still pending after the fast poll budget over to the Standard machine, which polls on and settles', async () => {
    // Waits of 1 s, then 2 s: the second would take the fast path's waits past its 1 s budget.
    const settings = { ...lifecycleSettings(), pollInitialSeconds: 1, fastPollSeconds: 1 };
    const sandbox = new SandboxRail(documentClient(), TABLE, systemClock);
    let asked = 0;
    const rail: Rail = {
      ...railWithHook('submit', async () => undefined),
      // Pending at the first two polls (one on each machine), then whatever clearing says.
      clearingStatus: async (payment) =>
        ++asked <= 2 ? { state: 'pending' } : sandbox.clearingStatus(payment),
    };
    const deps = () => ({ store: lifecycleStore(), clock: systemClock, settings, rail });
    const { runner, executions } = await startRunner({
      waitTimeOverrides: { WaitForClearing: 10 },
      taskOverrides: {
        ValidateCheckAndSubmit: lifecycleTask('validateCheckAndSubmit', (state) =>
          validateCheckAndSubmit(deps(), state),
        ),
        PollClearing: lifecycleTask('pollClearing', (state) => pollClearing(deps(), state)),
      },
    });
    const paymentId = await initiate(runner);
    await runner.idle();

    const record = await stored(paymentId);
    expect(statusesOf(record)).toEqual(SETTLED);
    expect(record.nextCheckAt).toBeUndefined();
    expect((await publishedEvents(paymentId)).map((event) => event.detail.sequence)).toEqual([0, 1, 2, 3, 4]);
    const [fast, waits] = executionsOf(executions, paymentId);
    // The fast path: the checks and submission, one wait and poll, the hand-over.
    expect(fast).toMatchObject({ type: 'EXPRESS', status: 'SUCCEEDED', transitions: 8 });
    // Long waits: two waits and polls (pending, then settled), the last publish.
    expect(waits).toMatchObject({
      type: 'STANDARD',
      status: 'SUCCEEDED',
      name: `${fast?.name}-w`,
      transitions: 8,
    });
    expect(asked).toBe(3);
  });

  it('runs the fast path again on a repeated start (Express runs at least once): nothing is submitted, recorded or published twice', async () => {
    let submissions = 0;
    const rail = railWithHook('submit', async () => undefined);
    const counting: Rail = {
      ...rail,
      submit: (payment) => {
        submissions += 1;
        return rail.submit(payment);
      },
    };
    const { runner, executions } = await startRunner({
      taskOverrides: { ValidateCheckAndSubmit: firstStepWith(counting) },
    });
    // The same execution (name and input) once more after it ended, then twice at once.
    const paymentId = await initiate(runner);
    await runner.idle();
    const start = { tenant: TENANT, paymentId, trigger: 'initiation' } as const;
    await runner.start(start);
    await runner.idle();
    expect(submissions).toBe(1);
    const once = await publishedEvents(paymentId);
    expect(once.map((event) => event.detail.sequence)).toEqual([0, 1, 2, 3, 4]);

    const concurrent = await initiate(runner);
    await runner.start({ ...start, paymentId: concurrent });
    await runner.idle();

    const names = new Set(executions.map((execution) => execution.name));
    expect(executions).toHaveLength(4);
    expect(names.size).toBe(2);
    for (const id of [paymentId, concurrent]) {
      const record = await stored(id);
      // Each status once: every change a conditional write naming the status it leaves.
      expect(statusesOf(record)).toEqual(SETTLED);
      expect(record.nextCheckAt).toBeUndefined();
      // One payment in clearing, submitted once (a second submission is the same payment, by paymentId).
      expect(await clearingState(id)).toBe('settled');
      // Each change published under one id: a concurrent run may send an id again, never another one.
      const events = await publishedEvents(id);
      expect([...new Set(events.map((event) => event.id))]).toHaveLength(5);
      expect(new Set(events.map((event) => event.detail.sequence))).toEqual(new Set([0, 1, 2, 3, 4]));
    }
    expect(submissions).toBeLessThanOrEqual(3);
    // The first transfer's second run found it settled and published: it sent nothing.
    expect(await publishedEvents(paymentId)).toEqual(once);
  });

  it('runs one task twice with the same input (its answer lost) without a second status write, submission or event', async () => {
    const { runner } = await startRunner();
    const paymentId = await initiate(runner, { debtorAccountId: 'acc-hold' });
    await runner.idle();
    const state = { tenant: TENANT, paymentId, trigger: 'initiation' as const };
    const before = await stored(paymentId);
    expect(before.status).toBe('AcceptedSettlementInProcess');
    const clearing = await clearingRecord(paymentId);
    // The first step again (as a redelivered task runs it): the transfer is past it, so it only
    // routes on to polling; no write, no second submission.
    const again = (await validateHandler(state)) as { next: string };
    expect(again.next).toBe('poll');
    const after = await stored(paymentId);
    expect(after.history).toEqual(before.history);
    expect(await clearingRecord(paymentId)).toEqual(clearing);
    const events = await publishedEvents(paymentId);
    // The poll twice: clearing still holds it, nothing changes.
    await pollClearingHandler({ ...state, pollAttempt: 0 });
    await pollClearingHandler({ ...state, pollAttempt: 0 });
    expect((await stored(paymentId)).history).toEqual(before.history);
    expect(await publishedEvents(paymentId)).toEqual(events);
  });

  it('starts the Standard execution of a hand-over once: a second run of the same fast path finds it running (same input) or ended', async () => {
    const { runner, executions } = await startRunner({ waitTimeOverrides: { HoldUntilValueDate: 300 } });
    const paymentId = await initiate(runner, { valueDate: tomorrow() });
    // While the hold runs, the same fast path again (a redelivered Express start): it reaches the
    // hand-over with the same name, and Step Functions answers the running execution.
    await eventually(() =>
      executions.some((execution) => execution.type === 'EXPRESS' && execution.paymentId === paymentId),
    );
    await runner.start({ tenant: TENANT, paymentId, trigger: 'initiation' });
    await runner.idle();
    const ran = executionsOf(executions, paymentId);
    expect(ran.filter((execution) => execution.type === 'STANDARD')).toHaveLength(1);
    expect(ran.filter((execution) => execution.type === 'EXPRESS')).toHaveLength(2);
    // Once it ended, the same start is refused ExecutionAlreadyExists, whatever the input (the
    // hand-over's Catch takes that as done): no second execution of long waits under the name.
    const name = ran.find((execution) => execution.type === 'STANDARD')?.name as string;
    await expect(
      runner.handOver({ StateMachineArn: 'arn', Name: name, Input: { tenant: TENANT, paymentId } }),
    ).rejects.toMatchObject({ name: 'StepFunctions.ExecutionAlreadyExistsException' });
    expect(ran.every((execution) => execution.status === 'SUCCEEDED')).toBe(true);
    expect(statusesOf(await stored(paymentId))).toEqual(SETTLED);
  });

  it('adds no recovery for a transfer whose execution still waits or runs; a later one runs', async () => {
    const { runner, executions } = await startRunner({ maxRunning: 1, maxRunningWhenQuiet: 1 });
    const first = await initiate(runner);
    const second = await initiate(runner);
    // `second` waits its turn behind `first`: a recovery of either would only repeat it.
    expect(runner.queued).toBe(1);
    await runner.start({ tenant: TENANT, paymentId: first, trigger: 'recovery', attempt: 1 });
    await runner.start({ tenant: TENANT, paymentId: second, trigger: 'recovery', attempt: 1 });
    // A cancellation is never dropped: only the execution it starts recalls a submitted payment.
    await runner.start({ tenant: TENANT, paymentId: second, trigger: 'cancellation' });
    await runner.idle();
    expect(executionsOf(executions, first).map((execution) => execution.trigger)).toEqual(['initiation']);
    expect(executionsOf(executions, second).map((execution) => execution.trigger)).toEqual([
      'initiation',
      'cancellation',
    ]);

    await runner.start({ tenant: TENANT, paymentId: first, trigger: 'recovery', attempt: 2 });
    await runner.idle();
    expect(executionsOf(executions, first).map((execution) => execution.trigger)).toEqual([
      'initiation',
      'recovery',
    ]);
  });

  it('runs at most maxRunning executions and maxActiveTasks tasks at once; every start still settles', async () => {
    let tasksNow = 0;
    let tasksMost = 0;
    let runningMost = 0;
    const { runner, executions } = await startRunner({
      // No API runs here: the quiet limits apply.
      maxRunning: 3,
      maxRunningWhenQuiet: 3,
      maxActiveTasks: 2,
      maxActiveTasksWhenQuiet: 2,
      taskOverrides: {
        ValidateCheckAndSubmit: async (input) => {
          tasksNow++;
          tasksMost = Math.max(tasksMost, tasksNow);
          runningMost = Math.max(runningMost, runner.inFlight);
          // Long enough that every start has been made while the first tasks still run.
          await new Promise((resolve) => setTimeout(resolve, 30));
          tasksNow--;
          return validateHandler(input);
        },
      },
    });
    const paymentIds = await Promise.all(Array.from({ length: 8 }, () => initiate(runner)));
    expect(runner.queued).toBeGreaterThan(0);
    await runner.idle();

    expect(tasksMost).toBe(2);
    expect(runningMost).toBe(3);
    for (const paymentId of paymentIds) {
      expect(statusesOf(await stored(paymentId))).toEqual(SETTLED);
      expectAllSucceeded(executions, paymentId, ['initiation']);
    }
  });

  it('runs maxRunning executions and maxActiveTasks tasks at once while the API receives requests, up to the WhenQuiet limits once it is quiet', async () => {
    let tasksNow = 0;
    let tasksMost = 0;
    let runningMost = 0;
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    // A request every 10 ms keeps the API busy until the test stops sending.
    markApiRequest();
    const requests = setInterval(markApiRequest, 10);
    try {
      const { runner, executions } = await startRunner({
        maxRunning: 4,
        maxRunningWhenQuiet: 6,
        maxActiveTasks: 2,
        maxActiveTasksWhenQuiet: 5,
        apiQuietAfterMs: 1000,
        taskOverrides: {
          ValidateCheckAndSubmit: async (input) => {
            tasksNow++;
            tasksMost = Math.max(tasksMost, tasksNow);
            runningMost = Math.max(runningMost, runner.inFlight);
            await released;
            tasksNow--;
            return validateHandler(input);
          },
        },
      });
      const paymentIds = await Promise.all(Array.from({ length: 8 }, () => initiate(runner)));
      await eventually(() => tasksNow === 2);
      // Several rechecks of the limit later, still only the busy limit runs.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(tasksMost).toBe(2);
      expect(runner.inFlight).toBe(4);

      clearInterval(requests);
      // No task has finished: the limit growing alone lets the waiting ones in.
      await eventually(() => tasksNow === 5 && runner.inFlight === 6);
      release();
      await runner.idle();

      expect(tasksMost).toBe(5);
      expect(runningMost).toBe(6);
      for (const paymentId of paymentIds) {
        expect(statusesOf(await stored(paymentId))).toEqual(SETTLED);
        expectAllSucceeded(executions, paymentId, ['initiation']);
      }
    } finally {
      clearInterval(requests);
      release();
    }
  });
});

describe('the lifecycle store', () => {
  const cancelledBy = (clientId: string) => ({
    status: 'Cancelled' as const,
    statusReason: 'RequestedByCustomer',
    date: new Date().toISOString(),
    actor: clientId,
  });
  const soon = () => new Date(Date.now() + 120_000);

  it('refuses an illegal status change before writing anything', async () => {
    const paymentId = await initiate(undefined);
    const before = await stored(paymentId);
    await expect(
      lifecycleStore().transition(TENANT, paymentId, {
        from: 'Received',
        change: { status: 'AcceptedSettlementCompleted', date: new Date().toISOString(), actor: 'rail' },
        nextCheckAt: soon(),
      }),
    ).rejects.toBeInstanceOf(IllegalStatusTransitionError);
    expect(await stored(paymentId)).toEqual(before);
  });

  /** A transfer stored as AcceptedCustomerProfile, no workflow running. */
  const atCustomerProfile = async (paymentId: string) => {
    const now = new Date().toISOString();
    await new DynamoDbCreditTransferStore(documentClient(), TABLE).create({
      tenant: TENANT,
      paymentId,
      clientId: CLIENT,
      createdAt: now,
      status: 'AcceptedCustomerProfile',
      statusDate: now,
      requestHash: 'x',
      servicer: {},
      transfer: { paymentMethod: 'CreditTransfer', amount: '1.00', debtorAccountId: 'acc-1' },
      history: [{ status: 'AcceptedCustomerProfile', date: now, actor: 'rail' }],
    });
    return paymentId;
  };

  it('claims a submission only without a cancellation, and cancels before submission only unclaimed', async () => {
    const store = lifecycleStore();
    const cancelOutOfCustomerProfile = (paymentId: string) =>
      store.transition(TENANT, paymentId, {
        from: 'AcceptedCustomerProfile',
        change: cancelledBy('client-b'),
        submission: 'unclaimed',
        nextCheckAt: soon(),
      });

    // Claimed first: the cancellation is recorded, but cannot cancel out of AcceptedCustomerProfile.
    const claimedFirst = await atCustomerProfile('claimed-first');
    expect(
      (await store.claimSubmission(TENANT, claimedFirst, { at: new Date(), id: 'claim-1' }))?.submittedAt,
    ).toBeDefined();
    expect(
      await store.claimSubmission(TENANT, claimedFirst, { at: new Date(), id: 'claim-1' }),
    ).toBeUndefined();
    await cancel(claimedFirst, undefined);
    expect(await cancelOutOfCustomerProfile(claimedFirst)).toBeUndefined();
    expect((await stored(claimedFirst)).status).toBe('AcceptedCustomerProfile');

    // Cancelled first: the claim is refused, so nothing reaches clearing.
    const cancelledFirst = await atCustomerProfile('cancelled-first');
    await cancel(cancelledFirst, undefined);
    expect(
      await store.claimSubmission(TENANT, cancelledFirst, { at: new Date(), id: 'claim-2' }),
    ).toBeUndefined();
    expect((await cancelOutOfCustomerProfile(cancelledFirst))?.status).toBe('Cancelled');
  });

  it('a step that read the transfer before the submission was claimed does not write Cancelled over the claim', async () => {
    // The table as it is: claimed by another execution (which may be submitting), then a cancellation recorded.
    const paymentId = await atCustomerProfile('claimed-under-the-step');
    await lifecycleStore().claimSubmission(TENANT, paymentId, { at: new Date(), id: 'claim-3' });
    await cancel(paymentId, undefined);
    // The step's first read is the one it made just before the claim landed.
    const real = lifecycleStore();
    let reads = 0;
    const readBeforeTheClaim: typeof real = Object.assign(Object.create(real), {
      get: async (tenant: string, id: string) => {
        const record = await real.get(tenant, id);
        if (reads++ > 0 || record === undefined) return record;
        const { submittedAt: _claimedLater, submissionClaim: _holder, ...unclaimed } = record;
        return unclaimed;
      },
    });
    const rail = new SandboxRail(documentClient(), TABLE, systemClock);
    await validateCheckAndSubmit(
      { store: readBeforeTheClaim, clock: systemClock, settings: lifecycleSettings(), rail },
      { tenant: TENANT, paymentId, trigger: 'cancellation' },
    );
    // The guarded write was refused and the step read again. The claim is another's and young:
    // the step submits nothing while its holder may be submitting, and cancels nothing either.
    expect(reads).toBeGreaterThan(1);
    expect((await stored(paymentId)).status).toBe('AcceptedCustomerProfile');
    expect(await clearingRecord(paymentId)).toBeUndefined();
  });
});

describe('local workflow runner: fair between tenants', () => {
  it('counts no execution that waits in a Wait state against maxRunning: a transfer started after held ones settles', async () => {
    const { runner, executions } = await startRunner({
      maxRunning: 2,
      maxRunningWhenQuiet: 2,
      // Held far longer than the test: only runner.stop() ends these executions.
      waitTimeOverrides: { HoldUntilValueDate: 600_000 },
    });
    try {
      const held = await Promise.all(
        Array.from({ length: 5 }, () => initiate(runner, { valueDate: tomorrow() }, 'tenant-holding')),
      );
      await eventually(() => runner.waiting === held.length);
      expect(runner.inFlight).toBe(0);

      const other = await initiate(runner, {}, 'tenant-other');
      await eventually(() => executionsOf(executions, other).length === 1);
      expect(executionsOf(executions, other)[0]?.status).toBe('SUCCEEDED');
      expect(runner.waiting).toBe(held.length);
    } finally {
      await runner.stop();
    }
  });

  it("serves waiting tasks tenant by tenant: one tenant's backlog delays another's transfer by a turn, not by the backlog", async () => {
    const { runner, executions } = await startRunner({ maxActiveTasks: 1, maxActiveTasksWhenQuiet: 1 });
    const backlog = await Promise.all(Array.from({ length: 12 }, () => initiate(runner, {}, 'tenant-busy')));
    const other = await initiate(runner, {}, 'tenant-other');
    await runner.idle();

    expect(executionsOf(executions, other)[0]?.status).toBe('SUCCEEDED');
    // Served in turn, the lone transfer ends among the first few (the busy tenant's oldest ones
    // share the turns); first come, first served, it would end last.
    const finished = executions.map((execution) => execution.tenant);
    expect(finished.indexOf('tenant-other')).toBeLessThan(4);
    for (const paymentId of backlog)
      expect(statusesOf(await stored(paymentId, 'tenant-busy'))).toEqual(SETTLED);
  });
});
