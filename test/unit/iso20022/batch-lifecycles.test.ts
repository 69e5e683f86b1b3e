import { describe, expect, it } from 'vitest';
import type { LifecycleStart } from '#domain/credit-transfers/lifecycle';
import { STALL_SECONDS } from '#domain/credit-transfers/lifecycle';
import type { CreditTransferRecord, CreditTransferStore } from '#domain/credit-transfers/ports';
import type { BatchRecord, BatchReference, BatchStore, Pain001Reader } from '#domain/iso20022/ports';
import {
  batchStartSeconds,
  START_CONCURRENCY,
  type StartPace,
  startBatchLifecycles,
} from '#domain/iso20022/start-batch-lifecycles';
import {
  BATCH_START_MAX_SECONDS,
  batchPaymentIds,
  MIN_BATCH_STARTS_PER_SECOND,
  submitBatch,
} from '#domain/iso20022/submit-batch';
import { currentApprovalRules } from '#domain/payment-controls/initiation-controls';
import type { PaymentControls } from '#domain/payment-controls/payment-controls';

/** For a batch no rule holds: nothing is announced. */
const noAnnouncement = {
  announce: async () => {
    throw new Error('must not announce');
  },
};

/** The table's two kinds of items, in memory, with the conditional writes the adapters make. */
const memoryStores = () => {
  const transfers = new Map<string, CreditTransferRecord>();
  const batches = new Map<string, BatchRecord>();
  const store: CreditTransferStore = {
    create: async (record) => {
      if (transfers.has(record.paymentId)) return false;
      transfers.set(record.paymentId, record);
      return true;
    },
    get: async (_tenant, paymentId) => transfers.get(paymentId),
  };
  const batchStore: BatchStore = {
    claimMessageId: async () => ({ claimed: true }),
    create: async (batch) => {
      if (batches.has(batch.batchId)) return false;
      batches.set(batch.batchId, batch);
      return true;
    },
    discard: async (_tenant, batchId) => {
      batches.delete(batchId);
    },
    get: async (_tenant, batchId) => batches.get(batchId),
    markStored: async (_tenant, batchId) => {
      const batch = batches.get(batchId);
      if (batch?.state !== 'Storing') return false;
      batches.set(batchId, { ...batch, state: 'Stored' });
      return true;
    },
    transfers: async (_tenant, paymentIds) => paymentIds.map((id) => transfers.get(id)),
  };
  return { store, batchStore, transfers, batches };
};

const reader: Pain001Reader = {
  read: async () => {
    throw new Error('JSON only here');
  },
};

const command = (count: number) => ({
  tenant: 't1',
  clientId: 'c1',
  idempotencyKey: 'payroll-1',
  servicer: {},
  body: {
    kind: 'json' as const,
    value: {
      creditTransfers: Array.from({ length: count }, (_, index) => ({
        paymentMethod: 'CreditTransfer',
        amount: `${index + 1}.00`,
        debtorAccountId: 'acc-1',
      })),
    },
  },
});

/** A pace on a clock of its own: a wait moves that clock on to the time waited for, at once. */
const virtualPace = (startsPerSecond: number) => {
  let now = 1_000_000;
  const waits: number[] = [];
  const pace: StartPace = {
    startsPerSecond,
    clock: { now: () => new Date(now) },
    sleep: async (milliseconds) => {
      waits.push(milliseconds);
      now = Math.max(now, now + milliseconds);
    },
  };
  return { pace, waits, elapsed: () => now - 1_000_000 };
};

describe('a batch’s lifecycles', () => {
  it('are asked for once, after every transfer is stored, by the request that stored the batch; a replay asks nothing', async () => {
    const { store, batchStore, transfers } = memoryStores();
    const asked: { batch: BatchReference; stored: number }[] = [];
    const lifecycles = {
      start: async (batch: BatchReference) => {
        asked.push({ batch, stored: transfers.size });
      },
    };
    const deps = { store, batches: batchStore, reader, clock: { now: () => new Date() }, lifecycles };
    const first = await submitBatch(deps, command(40));
    expect(asked).toEqual([{ batch: { tenant: 't1', batchId: first.batch.batchId }, stored: 40 }]);
    const replay = await submitBatch(deps, command(40));
    expect(replay.replayed).toBe(true);
    expect(asked).toHaveLength(1);
  });

  it('a failed ask does not fail the request: the transfers stay due for the reconciler', async () => {
    const { store, batchStore, transfers } = memoryStores();
    const lifecycles = {
      start: async () => {
        throw new Error('Lambda unavailable');
      },
    };
    const deps = { store, batches: batchStore, reader, clock: { now: () => new Date() }, lifecycles };
    const accepted = await submitBatch(deps, command(3));
    expect(accepted.batch.state).toBe('Stored');
    for (const record of transfers.values()) expect(record.nextCheckAt).toBeDefined();
  });

  it('start each transfer’s lifecycle once, a bounded number at a time, and count the starts that failed', async () => {
    const { store, batchStore } = memoryStores();
    const deps = { store, batches: batchStore, reader, clock: { now: () => new Date() } };
    const { batch } = await submitBatch(deps, command(100));
    const started: LifecycleStart[] = [];
    let inFlight = 0;
    let most = 0;
    const workflow = {
      start: async (start: LifecycleStart) => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 1));
        inFlight -= 1;
        if (start.paymentId === batchPaymentIds(batch)[7]) throw new Error('throttled');
        started.push(start);
      },
    };
    const report = await startBatchLifecycles(
      { batches: batchStore, workflow, announcer: noAnnouncement, pace: virtualPace(10_000).pace },
      { tenant: 't1', batchId: batch.batchId },
    );
    expect(report).toEqual({ found: true, started: 99, held: 0, failed: 1 });
    expect(most).toBe(START_CONCURRENCY);
    expect(started.map((start) => start.trigger)).toEqual(Array(99).fill('initiation'));
    expect(new Set(started.map((start) => start.paymentId)).size).toBe(99);
  });

  it('start nothing for a batch that is not stored yet, or not there', async () => {
    const { store, batchStore, batches } = memoryStores();
    const { batch } = await submitBatch(
      { store, batches: batchStore, reader, clock: { now: () => new Date() } },
      command(2),
    );
    batches.set(batch.batchId, { ...batch, state: 'Storing' });
    const workflow = {
      start: async () => {
        throw new Error('must not start');
      },
    };
    for (const batchId of [batch.batchId, 'no-such-batch'])
      expect(
        await startBatchLifecycles(
          { batches: batchStore, workflow, announcer: noAnnouncement, pace: virtualPace(16).pace },
          { tenant: 't1', batchId },
        ),
      ).toEqual({
        found: false,
        started: 0,
        held: 0,
        failed: 0,
      });
  });

  it('are started at the pace given: the n-th start no sooner than n / rate seconds after the first', async () => {
    const { store, batchStore } = memoryStores();
    const { batch } = await submitBatch(
      { store, batches: batchStore, reader, clock: { now: () => new Date() } },
      command(2000),
    );
    const { pace, elapsed } = virtualPace(16);
    const startedAt = new Map<string, number>();
    const workflow = {
      start: async (start: LifecycleStart) => {
        startedAt.set(start.paymentId, elapsed());
      },
    };
    const report = await startBatchLifecycles(
      { batches: batchStore, workflow, announcer: noAnnouncement, pace },
      { tenant: 't1', batchId: batch.batchId },
    );
    expect(report).toEqual({ found: true, started: 2000, held: 0, failed: 0 });
    const times = batchPaymentIds(batch).map((paymentId) => startedAt.get(paymentId) as number);
    // Never more than 16 starts within any second: each start at or after its slot.
    times.forEach((time, index) => {
      expect(time).toBeGreaterThanOrEqual((index * 1000) / 16);
    });
    // And no slower than the pace: the last start at its slot, 124.9 s after the first.
    expect(elapsed()).toBeCloseTo(batchStartSeconds(2000, 16) * 1000, -1);
    expect(batchStartSeconds(2000, 16)).toBeCloseTo(124.94, 2);
  });

  it('fall due for the reconciler only once their start, at the slowest pace allowed, is late', async () => {
    const { store, batchStore, transfers } = memoryStores();
    const now = new Date('2026-12-08T10:00:00.000Z');
    const { batch } = await submitBatch(
      { store, batches: batchStore, reader, clock: { now: () => now } },
      command(2000),
    );
    const dueAfter = batchPaymentIds(batch).map(
      (paymentId) => (Date.parse(transfers.get(paymentId)?.nextCheckAt as string) - now.getTime()) / 1000,
    );
    dueAfter.forEach((seconds, index) => {
      expect(seconds).toBeGreaterThanOrEqual(
        STALL_SECONDS + batchStartSeconds(index + 1, MIN_BATCH_STARTS_PER_SECOND) - 0.001,
      );
    });
    // The slowest pace still starts a largest batch within its time, and the last is due soon after.
    expect(batchStartSeconds(2000, MIN_BATCH_STARTS_PER_SECOND)).toBeLessThanOrEqual(BATCH_START_MAX_SECONDS);
    expect(dueAfter[0]).toBe(STALL_SECONDS);
    expect(Math.max(...dueAfter)).toBeLessThanOrEqual(STALL_SECONDS + BATCH_START_MAX_SECONDS);
  });
});

/** The tenant's controls as a reader that counts its reads; the history reads counted too. */
const controlsOf = (controls: { current: PaymentControls }) => {
  const reads = { controls: 0, history: 0 };
  const approvalRules = currentApprovalRules(
    {
      current: async () => {
        reads.controls += 1;
        return {
          version: 1,
          controls: controls.current,
          clientId: 'admin',
          createdAt: '2026-12-01T00:00:00Z',
        };
      },
    },
    {
      hasPaid: async () => {
        reads.history += 1;
        return false;
      },
    },
  );
  return { approvalRules, reads };
};

const OVER_10: PaymentControls = {
  approvalRules: [
    { name: 'over 10', currency: 'EUR', minimumAmount: '10.00', approvalsRequired: 1 },
    { name: 'over 20', currency: 'EUR', minimumAmount: '20.00', approvalsRequired: 2 },
  ],
  approvalExpiry: 'PT1H',
  limits: [],
} as unknown as PaymentControls;

/** 30 EUR transfers of 1.00 to 30.00: 10.00 and up held by `over 10`, 20.00 and up by `over 20`. */
const eurCommand = (count: number) => {
  const base = command(count);
  return {
    ...base,
    body: {
      kind: 'json' as const,
      value: {
        creditTransfers: base.body.value.creditTransfers.map((transfer) => ({
          ...transfer,
          currency: 'EUR',
        })),
      },
    },
  };
};

describe('a batch under approval rules', () => {
  it('stores each transfer a rule holds Pending with the approval a single initiation gets, reads the controls once, and starts no lifecycle for them: their change to Pending is announced', async () => {
    const { store, batchStore, transfers } = memoryStores();
    const { approvalRules, reads } = controlsOf({ current: OVER_10 });
    const now = new Date('2026-12-08T10:00:00Z');
    const deps = { store, batches: batchStore, reader, clock: { now: () => now }, approvalRules };
    const { batch, paymentIds } = await submitBatch(deps, eurCommand(30));
    expect(reads).toEqual({ controls: 1, history: 0 });
    const statuses = paymentIds.map((id) => transfers.get(id)?.status);
    expect(statuses.filter((status) => status === 'Pending')).toHaveLength(21);
    expect(statuses.slice(0, 9)).toEqual(Array(9).fill('Received'));
    const held = transfers.get(paymentIds[19] as string);
    expect(held?.approval).toEqual({
      rule: 'over 20',
      initiatingClientId: 'c1',
      approvalsRequired: 2,
      approvals: [],
      expiresAt: '2026-12-08T11:00:00.000Z',
    });
    expect(held?.history).toEqual([{ status: 'Pending', date: batch.createdAt, actor: 'c1' }]);
    // Due once its paced start is late (120 s, plus 19 starts at the slowest pace), before its expiry.
    expect(held?.nextCheckAt).toBe('2026-12-08T10:02:02.111Z');
    expect(transfers.get(paymentIds[9] as string)?.approval?.rule).toBe('over 10');

    const started: string[] = [];
    const workflow = {
      start: async (start: LifecycleStart) => {
        started.push(start.paymentId);
      },
    };
    const announced: string[] = [];
    const announcer = {
      announce: async (transfer: { tenant: string; paymentId: string }) => {
        announced.push(transfer.paymentId);
      },
    };
    const report = await startBatchLifecycles(
      { batches: batchStore, workflow, announcer, pace: virtualPace(10_000).pace },
      { tenant: 't1', batchId: batch.batchId },
    );
    expect(report).toEqual({ found: true, started: 9, held: 21, failed: 0 });
    const heldIds = paymentIds.filter((id) => transfers.get(id)?.status === 'Pending');
    expect(started.sort()).toEqual(paymentIds.slice(0, 9).sort());
    expect(announced.sort()).toEqual([...heldIds].sort());
  });

  it('reads the payment history per transfer only when a rule asks whether the creditor is new', async () => {
    const { store, batchStore, transfers } = memoryStores();
    const { approvalRules, reads } = controlsOf({
      current: {
        approvalRules: [{ name: 'new creditors', newCreditorOnly: true, approvalsRequired: 1 }],
      } as unknown as PaymentControls,
    });
    const base = command(3);
    const withCreditors = {
      ...base,
      body: {
        kind: 'json' as const,
        value: {
          creditTransfers: base.body.value.creditTransfers.map((transfer, index) =>
            index === 0 ? transfer : { ...transfer, creditorAccountId: `creditor-${index}` },
          ),
        },
      },
    };
    const deps = { store, batches: batchStore, reader, clock: { now: () => new Date() }, approvalRules };
    const { paymentIds } = await submitBatch(deps, withCreditors);
    expect(reads).toEqual({ controls: 1, history: 2 });
    expect(paymentIds.map((id) => transfers.get(id)?.status)).toEqual(['Received', 'Pending', 'Pending']);
  });

  it('stores on a repeat of an interrupted request what its first attempt decided, though the controls changed between', async () => {
    const { store, batchStore, transfers } = memoryStores();
    const controls = { current: OVER_10 };
    const { approvalRules } = controlsOf(controls);
    let writes = 0;
    const crashing: CreditTransferStore = {
      ...store,
      create: async (record) => {
        writes += 1;
        if (writes > 12) throw new Error('the process stopped');
        return store.create(record);
      },
    };
    const clock = { now: () => new Date('2026-12-08T10:00:00Z') };
    await expect(
      submitBatch({ store: crashing, batches: batchStore, reader, clock, approvalRules }, eurCommand(30)),
    ).rejects.toThrow('the process stopped');
    controls.current = { approvalRules: [], limits: [] } as unknown as PaymentControls;
    const later = { now: () => new Date('2026-12-08T10:30:00Z') };
    const { paymentIds, replayed } = await submitBatch(
      { store, batches: batchStore, reader, clock: later, approvalRules },
      eurCommand(30),
    );
    expect(replayed).toBe(true);
    const records = paymentIds.map((id) => transfers.get(id));
    expect(records.filter((record) => record?.status === 'Pending')).toHaveLength(21);
    expect(new Set(records.map((record) => record?.approval?.expiresAt))).toEqual(
      new Set([undefined, '2026-12-08T11:00:00.000Z']),
    );
  });
});
