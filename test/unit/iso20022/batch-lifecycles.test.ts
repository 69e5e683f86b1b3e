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
      { batches: batchStore, workflow, pace: virtualPace(10_000).pace },
      { tenant: 't1', batchId: batch.batchId },
    );
    expect(report).toEqual({ found: true, started: 99, failed: 1 });
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
          { batches: batchStore, workflow, pace: virtualPace(16).pace },
          { tenant: 't1', batchId },
        ),
      ).toEqual({
        found: false,
        started: 0,
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
      { batches: batchStore, workflow, pace },
      { tenant: 't1', batchId: batch.batchId },
    );
    expect(report).toEqual({ found: true, started: 2000, failed: 0 });
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
