import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { documentClient } from '#adapters/aws/dynamodb-client';
import { DynamoDbCreditTransferStore } from '#adapters/credit-transfers/credit-transfer-store';
import { SandboxRail } from '#adapters/credit-transfers/sandbox-rail';
import { creditTransferKey } from '#adapters/table/keys';
import { type Clock, systemClock } from '#domain/commons/ports';
import { cancelCreditTransfer } from '#domain/credit-transfers/cancel-credit-transfer';
import type { CreditTransferStatus } from '#domain/credit-transfers/credit-transfer';
import {
  IllegalStatusTransitionError,
  STALL_SECONDS,
  statusEventId,
} from '#domain/credit-transfers/lifecycle';
import {
  type LifecycleState,
  publishStatusEvents,
  validateCheckAndSubmit,
} from '#domain/credit-transfers/lifecycle-steps';
import type {
  CreditTransferRecord,
  Rail,
  StatusChangedEvent,
  StatusTransition,
} from '#domain/credit-transfers/ports';
import { lifecycleSettings } from '#workflow/dependencies';
import {
  CLIENT,
  clearingRecord,
  initiate,
  lifecycleStore,
  startWorkflowEnvironment,
  statusesOf,
  stored,
  TABLE,
  TENANT,
} from './harness.ts';

/**
 * The first step from Received: technical validation and the customer-profile check recorded in
 * one conditional write, each status with its own history entry and event.
 */

let environment: Awaited<ReturnType<typeof startWorkflowEnvironment>>;

beforeAll(async () => {
  environment = await startWorkflowEnvironment();
});

afterEach(() => {
  vi.restoreAllMocks();
});

afterAll(async () => {
  await environment?.close();
});

/** A transfer stored as an earlier write left it: at the last status of `history`, due for a check now. */
const storeTransfer = (
  paymentId: string,
  amount: string,
  history: CreditTransferRecord['history'],
  bookkeeping: Pick<CreditTransferRecord, 'publishedCount'> = {},
) => {
  const first = history[0] as CreditTransferRecord['history'][number];
  const last = history.at(-1) as CreditTransferRecord['history'][number];
  return new DynamoDbCreditTransferStore(documentClient(), TABLE).create({
    tenant: TENANT,
    paymentId,
    clientId: CLIENT,
    createdAt: first.date,
    status: last.status,
    statusDate: last.date,
    requestHash: 'x',
    servicer: {},
    transfer: { paymentMethod: 'CreditTransfer', amount, debtorAccountId: 'acc-1' },
    history,
    ...bookkeeping,
    nextCheckAt: last.date,
  });
};

/** A clock a second further on at every reading, from a second after now: each date says which reading it was. */
const steppingClock = () => {
  const start = Date.now() + 1000;
  const readings: Date[] = [];
  const clock: Clock = {
    now: () => {
      const reading = new Date(start + readings.length * 1000);
      readings.push(reading);
      return reading;
    },
  };
  return { clock, readings };
};

/** The sandbox rail, counting its calls; `beforeCheck` runs before each customer-profile check answers. */
const countingRail = (beforeCheck?: (paymentId: string) => Promise<void>) => {
  const sandbox = new SandboxRail(documentClient(), TABLE, systemClock);
  const calls = { checks: 0, submissions: 0 };
  const rail: Rail = {
    checkCustomerProfile: async (payment) => {
      calls.checks += 1;
      await beforeCheck?.(payment.paymentId);
      return sandbox.checkCustomerProfile(payment);
    },
    submit: (payment) => {
      calls.submissions += 1;
      return sandbox.submit(payment);
    },
    clearingStatus: (payment) => sandbox.clearingStatus(payment),
    recall: (payment) => sandbox.recall(payment),
  };
  return { rail, calls };
};

/** The lifecycle store, recording every status transition it is asked for. */
const recordingStore = (failFirstTransition = false) => {
  const real = lifecycleStore();
  const transitions: StatusTransition[] = [];
  const store: typeof real = Object.assign(Object.create(real), {
    transition: async (tenant: string, paymentId: string, transition: StatusTransition) => {
      transitions.push(transition);
      // The process dies before the write leaves it.
      if (failFirstTransition && transitions.length === 1) throw new Error('the process died');
      return real.transition(tenant, paymentId, transition);
    },
  });
  return { store, transitions };
};

/** UpdateItems of the payment's own item (sandbox clearing's record is another item). */
const countPaymentUpdates = (paymentId: string) => {
  const client = documentClient();
  const update = client.update.bind(client);
  const key = creditTransferKey(TENANT, paymentId).pk;
  const updates: string[] = [];
  vi.spyOn(client, 'update').mockImplementation((async (input: Parameters<typeof update>[0]) => {
    if ((input.Key as { pk?: string } | undefined)?.pk === key) updates.push(String(input.UpdateExpression));
    return update(input);
  }) as never);
  return updates;
};

const statusWrites = (updates: readonly string[]) =>
  updates.filter((update) => update.includes('#status = :to'));

const firstStep = (
  paymentId: string,
  { store, rail, clock }: { store: ReturnType<typeof lifecycleStore>; rail: Rail; clock: Clock },
) =>
  validateCheckAndSubmit(
    { store, rail, clock, settings: lifecycleSettings() },
    { tenant: TENANT, paymentId, trigger: 'initiation' },
  );

/** Publishes what the step handed on, as the publish state does, and answers what went out. */
const publish = async (state: LifecycleState): Promise<StatusChangedEvent[]> => {
  const published: StatusChangedEvent[] = [];
  await publishStatusEvents(
    {
      store: lifecycleStore(),
      publisher: { publish: async (events) => void published.push(...events) },
    },
    state,
  );
  return published;
};

const transitionsOf = (transitions: readonly StatusTransition[]) =>
  transitions.map(({ from, through = [], change }) => [from, ...through.map((t) => t.status), change.status]);

const tomorrow = () => new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);

describe('technical validation and the customer-profile check', () => {
  it('are one write from Received: both history entries, in order, each with its date and actor, and both events', async () => {
    const paymentId = await initiate(undefined);
    const { store, transitions } = recordingStore();
    const { rail, calls } = countingRail();
    const { clock, readings } = steppingClock();
    const updates = countPaymentUpdates(paymentId);

    const output = await firstStep(paymentId, { store, rail, clock });

    // Two status writes in all: validation with the check (claiming the submission), then the submission.
    expect(transitionsOf(transitions)).toEqual([
      ['Received', 'AcceptedTechnicalValidation', 'AcceptedCustomerProfile'],
      ['AcceptedCustomerProfile', 'AcceptedSettlementInProcess'],
    ]);
    expect(statusWrites(updates)).toHaveLength(2);
    expect(transitions[0]).toMatchObject({ unlessCancellationRequested: true });
    expect(transitions[0]?.claimSubmission).toBeDefined();
    expect(calls).toEqual({ checks: 1, submissions: 1 });

    const record = await stored(paymentId);
    expect(statusesOf(record)).toEqual([
      'Received',
      'AcceptedTechnicalValidation',
      'AcceptedCustomerProfile',
      'AcceptedSettlementInProcess',
    ]);
    // Validation is dated when the step decided it, the profile's outcome when the rail answered.
    const [validation, profile] = [record.history[1], record.history[2]];
    expect(validation).toEqual({
      status: 'AcceptedTechnicalValidation',
      date: readings[0]?.toISOString(),
      actor: 'workflow',
    });
    expect(profile).toEqual({
      status: 'AcceptedCustomerProfile',
      date: readings[1]?.toISOString(),
      actor: 'rail',
    });
    expect(record.submittedAt).toBe(readings[0]?.toISOString());

    // Each change its own event, its sequence the history position: the ids of the old two writes.
    const events = await publish(output);
    expect(events.map((event) => [event.sequence, event.previousStatus, event.status])).toEqual([
      [0, undefined, 'Received'],
      [1, 'Received', 'AcceptedTechnicalValidation'],
      [2, 'AcceptedTechnicalValidation', 'AcceptedCustomerProfile'],
      [3, 'AcceptedCustomerProfile', 'AcceptedSettlementInProcess'],
    ]);
    expect(events.map((event) => event.eventId)).toEqual(
      [0, 1, 2, 3].map((sequence) => statusEventId(TENANT, paymentId, sequence)),
    );
    expect(events.map((event) => event.date)).toEqual(record.history.map((entry) => entry.date));
  });

  it('hold a transfer whose value date is ahead in the same one write: no claim, the hold routed on', async () => {
    const valueDate = tomorrow();
    const paymentId = await initiate(undefined, { valueDate });
    const { store, transitions } = recordingStore();
    const { rail, calls } = countingRail();
    const updates = countPaymentUpdates(paymentId);

    const output = await firstStep(paymentId, { store, rail, clock: systemClock });

    expect(transitionsOf(transitions)).toEqual([
      ['Received', 'AcceptedTechnicalValidation', 'AcceptedCustomerProfile'],
    ]);
    expect(statusWrites(updates)).toHaveLength(1);
    expect(calls).toEqual({ checks: 1, submissions: 0 });
    expect(output).toMatchObject({
      status: 'AcceptedCustomerProfile',
      next: 'hold',
      holdUntil: `${valueDate}T00:00:00Z`,
    });
    expect(output.unpublished?.map((event) => event.status)).toEqual([
      'Received',
      'AcceptedTechnicalValidation',
      'AcceptedCustomerProfile',
    ]);
    const record = await stored(paymentId);
    expect(record.submittedAt).toBeUndefined();
    // Looked at again just after the hold ends: at the hold's end and a stall time, or, when the
    // check set at initiation is already no more than half a stall time before that (a transfer
    // initiated in the last minute or so before midnight), at that check.
    const afterHold = Date.parse(`${valueDate}T00:00:00Z`) + STALL_SECONDS * 1000;
    const nextCheck = Date.parse(record.nextCheckAt ?? '');
    expect(nextCheck).toBeLessThanOrEqual(afterHold);
    expect(nextCheck).toBeGreaterThanOrEqual(afterHold - (STALL_SECONDS * 1000) / 2);
    if (Date.now() < afterHold - 1.5 * STALL_SECONDS * 1000) expect(nextCheck).toBe(afterHold);
  });

  it('record a rejection at the check in one write: Received -> AcceptedTechnicalValidation -> Rejected', async () => {
    const paymentId = await initiate(undefined, { debtorAccountId: 'acc-blocked' });
    const { store, transitions } = recordingStore();
    const { rail, calls } = countingRail();
    const updates = countPaymentUpdates(paymentId);

    const output = await firstStep(paymentId, { store, rail, clock: systemClock });

    expect(transitionsOf(transitions)).toEqual([['Received', 'AcceptedTechnicalValidation', 'Rejected']]);
    expect(statusWrites(updates)).toHaveLength(1);
    expect(calls).toEqual({ checks: 1, submissions: 0 });
    const record = await stored(paymentId);
    expect(record).toMatchObject({
      status: 'Rejected',
      statusReason: 'BlockedAccount',
      statusReasonCode: 'AC06',
    });
    expect(record.history.slice(1)).toMatchObject([
      { status: 'AcceptedTechnicalValidation', actor: 'workflow' },
      { status: 'Rejected', statusReason: 'BlockedAccount', statusReasonCode: 'AC06', actor: 'rail' },
    ]);
    expect(record.history[1]).not.toHaveProperty('statusReason');
    expect(output.next).toBe('finish');
    const events = await publish(output);
    expect(events.map((event) => [event.sequence, event.status, event.statusReasonCode])).toEqual([
      [0, 'Received', undefined],
      [1, 'AcceptedTechnicalValidation', undefined],
      [2, 'Rejected', 'AC06'],
    ]);
    expect((await stored(paymentId)).nextCheckAt).toBeUndefined();
  });

  it('reject a transfer that cannot be processed from Received in one write, without asking the rail', async () => {
    const paymentId = 'zero-amount-one-write';
    const now = new Date().toISOString();
    await storeTransfer(paymentId, '0.00', [{ status: 'Received', date: now, actor: CLIENT }]);
    const { store, transitions } = recordingStore();
    const { rail, calls } = countingRail();

    await firstStep(paymentId, { store, rail, clock: systemClock });

    expect(transitionsOf(transitions)).toEqual([['Received', 'Rejected']]);
    expect(calls).toEqual({ checks: 0, submissions: 0 });
    expect((await stored(paymentId)).history.slice(1)).toMatchObject([
      { status: 'Rejected', statusReason: 'ZeroAmount', actor: 'workflow' },
    ]);
  });

  it('lose to a cancellation recorded while the rail checks: Cancelled from Received, nothing validated or submitted', async () => {
    const paymentId = await initiate(undefined);
    const { store, transitions } = recordingStore();
    const { rail, calls } = countingRail(async (id) => {
      await cancelCreditTransfer(
        { store: lifecycleStore(), clock: systemClock, workflow: undefined },
        { tenant: TENANT, clientId: 'client-b', paymentId: id, body: undefined, servicer: {} },
      );
    });

    const output = await firstStep(paymentId, { store, rail, clock: systemClock });

    // The write guarded by the cancellation was refused; the step read again and cancelled.
    expect(transitionsOf(transitions)).toEqual([
      ['Received', 'AcceptedTechnicalValidation', 'AcceptedCustomerProfile'],
      ['Received', 'Cancelled'],
    ]);
    const record = await stored(paymentId);
    expect(statusesOf(record)).toEqual(['Received', 'Cancelled']);
    expect(record.history[1]).toMatchObject({ statusReason: 'RequestedByCustomer', actor: 'client-b' });
    expect(record.submittedAt).toBeUndefined();
    expect(calls).toEqual({ checks: 1, submissions: 0 });
    expect(await clearingRecord(paymentId)).toBeUndefined();
    expect((await publish(output)).map((event) => [event.sequence, event.status])).toEqual([
      [0, 'Received'],
      [1, 'Cancelled'],
    ]);
  });

  it('ask the rail again after a crash between its answer and the write, and record each status once', async () => {
    const paymentId = await initiate(undefined);
    const crashing = recordingStore(true);
    const { rail, calls } = countingRail();

    await expect(firstStep(paymentId, { store: crashing.store, rail, clock: systemClock })).rejects.toThrow(
      'the process died',
    );
    // Nothing written: the transfer still reads Received, due for recovery.
    const stuck = await stored(paymentId);
    expect(statusesOf(stuck)).toEqual(['Received']);
    expect(stuck.nextCheckAt).toBeDefined();
    expect(calls.checks).toBe(1);

    await firstStep(paymentId, { ...recordingStore(), rail, clock: systemClock });
    expect(calls).toEqual({ checks: 2, submissions: 1 });
    expect(statusesOf(await stored(paymentId))).toEqual([
      'Received',
      'AcceptedTechnicalValidation',
      'AcceptedCustomerProfile',
      'AcceptedSettlementInProcess',
    ]);
  });

  it('go on from a transfer stored at AcceptedTechnicalValidation (validated by a write of its own) with the check alone', async () => {
    const paymentId = 'validated-before-one-write';
    const now = new Date().toISOString();
    await storeTransfer(
      paymentId,
      '1.00',
      [
        { status: 'Received', date: now, actor: CLIENT },
        { status: 'AcceptedTechnicalValidation', date: now, actor: 'workflow' },
      ],
      { publishedCount: 2 },
    );
    const { store, transitions } = recordingStore();
    const { rail, calls } = countingRail();

    const output = await firstStep(paymentId, { store, rail, clock: systemClock });

    expect(transitionsOf(transitions)).toEqual([
      ['AcceptedTechnicalValidation', 'AcceptedCustomerProfile'],
      ['AcceptedCustomerProfile', 'AcceptedSettlementInProcess'],
    ]);
    expect(calls).toEqual({ checks: 1, submissions: 1 });
    expect(statusesOf(await stored(paymentId))).toEqual([
      'Received',
      'AcceptedTechnicalValidation',
      'AcceptedCustomerProfile',
      'AcceptedSettlementInProcess',
    ]);
    // Only the changes this step made are left to publish.
    expect(output.unpublished?.map((event) => [event.sequence, event.status])).toEqual([
      [2, 'AcceptedCustomerProfile'],
      [3, 'AcceptedSettlementInProcess'],
    ]);
  });
});

describe("the lifecycle store's transition through earlier changes", () => {
  const changeTo = (status: CreditTransferStatus) => ({
    status,
    date: new Date().toISOString(),
    actor: 'rail',
  });

  it.each<[CreditTransferStatus, CreditTransferStatus[], CreditTransferStatus]>([
    // Each `from` -> `to` alone is allowed: what is refused is a step on the way.
    ['Received', ['AcceptedCustomerProfile'], 'Rejected'],
    ['Received', ['Rejected'], 'Cancelled'],
    ['Received', ['AcceptedTechnicalValidation'], 'AcceptedTechnicalValidation'],
  ])('refuses %s through %j to %s before writing anything', async (from, through, to) => {
    const paymentId = await initiate(undefined);
    const before: CreditTransferRecord = await stored(paymentId);
    await expect(
      lifecycleStore().transition(TENANT, paymentId, {
        from,
        through: through.map(changeTo),
        change: changeTo(to),
        nextCheckAt: new Date(Date.now() + 120_000),
      }),
    ).rejects.toBeInstanceOf(IllegalStatusTransitionError);
    expect(await stored(paymentId)).toEqual(before);
  });
});
