import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbLifecycleStore } from '#adapters/credit-transfers/credit-transfer-lifecycle-store';
import { DynamoDbLimitCounters } from '#adapters/payment-controls/limit-counters';
import type { CreditTransferRecord } from '#domain/credit-transfers/ports';
import {
  limitReleaseListener,
  RELEASE_LEASE_SECONDS,
  ReleaseInProgressError,
} from '#domain/payment-controls/count-limits';
import { type LimitCounterKey, type LimitHold, toCountedUnits } from '#domain/payment-controls/limits';
import { type DynaliteTable, startDynaliteTable } from '../../support/dynalite-table.ts';

/**
 * Giving back what a Rejected or Cancelled transfer counted, against dynalite: exactly once, even
 * when two publish steps run for the transfer at once, or one runs on a record read before the
 * other finished.
 */
const TABLE = 'limit-release-unit';
const NOW = new Date('2026-12-08T10:00:00.000Z');

let table: DynaliteTable;
let store: DynamoDbLifecycleStore;
let counters: DynamoDbLimitCounters;
let next = 0;

beforeAll(async () => {
  table = await startDynaliteTable(TABLE);
  const { documents } = table;
  store = new DynamoDbLifecycleStore(documents, TABLE);
  counters = new DynamoDbLimitCounters(documents, TABLE);
});

afterAll(async () => {
  await table?.close();
});

/** A Cancelled transfer of 250.00 EUR counted in its day's counter (reserved and noted). */
const cancelledAndCounted = async (hold: Partial<LimitHold> = {}) => {
  const paymentId = `p-${++next}`;
  const debtorAccountId = `ACCOUNT-${next}`;
  const key: LimitCounterKey = {
    tenant: 't1',
    debtorAccountId,
    currency: 'EUR',
    period: 'day',
    start: '2026-12-08',
  };
  const record: CreditTransferRecord = {
    tenant: 't1',
    paymentId,
    clientId: 'c1',
    createdAt: NOW.toISOString(),
    status: 'Cancelled',
    statusDate: NOW.toISOString(),
    requestHash: 'h',
    servicer: {},
    transfer: { paymentMethod: 'CreditTransfer', amount: '250.00', currency: 'EUR', debtorAccountId },
    history: [{ status: 'Cancelled', date: NOW.toISOString(), actor: 'c1' }],
    limits: {
      state: 'held',
      limits: [{ period: 'day', maxAmount: '1000.00', onBreach: 'reject' }],
      counters: [{ period: 'day', start: '2026-12-08' }],
      approvalExpirySeconds: 3600,
      ...hold,
    },
    nextCheckAt: NOW.toISOString(),
  };
  expect(await store.create(record)).toBe(true);
  await counters.reserve(key, 'someone-else', toCountedUnits('100.00'), 'unbounded');
  await counters.reserve(key, paymentId, toCountedUnits('250.00'), 'unbounded');
  await counters.acknowledge(key, paymentId);
  return { record, key };
};

const listenerAt = (now: Date) => limitReleaseListener({ store, counters, clock: { now: () => now } });

describe('giving back what a transfer counted', () => {
  it('gives back once when two publish steps tell of the same final transfer at once', async () => {
    const { record, key } = await cancelledAndCounted();
    const listener = listenerAt(NOW);
    const outcomes = await Promise.allSettled([
      listener.transferFinal(record),
      listener.transferFinal(record),
    ]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    expect(await counters.usage(key)).toEqual({ usedUnits: toCountedUnits('100.00'), usedCount: 1 });
    expect((await store.get('t1', record.paymentId))?.limits?.state).toBe('released');
  });

  it('gives nothing back twice for a record read before another caller finished', async () => {
    const { record, key } = await cancelledAndCounted();
    const listener = listenerAt(NOW);
    await listener.transferFinal(record);
    // The stale read still says `held`: its claim is refused, nothing released again.
    await expect(listener.transferFinal(record)).rejects.toBeInstanceOf(ReleaseInProgressError);
    expect(await counters.usage(key)).toEqual({ usedUnits: toCountedUnits('100.00'), usedCount: 1 });
    // Read afresh, it owes nothing any more.
    await listener.transferFinal((await store.get('t1', record.paymentId)) as CreditTransferRecord);
    expect(await counters.usage(key)).toEqual({ usedUnits: toCountedUnits('100.00'), usedCount: 1 });
  });

  it('leaves a claim to its holder, and takes over one whose holder died once its lease has run', async () => {
    const claimedAt = NOW.toISOString();
    const { record, key } = await cancelledAndCounted({ state: 'releasing', releasingSince: claimedAt });
    await expect(listenerAt(NOW).transferFinal(record)).rejects.toBeInstanceOf(ReleaseInProgressError);
    expect(await counters.usage(key)).toEqual({ usedUnits: toCountedUnits('350.00'), usedCount: 2 });
    const later = new Date(NOW.getTime() + (RELEASE_LEASE_SECONDS + 1) * 1000);
    await listenerAt(later).transferFinal(record);
    expect(await counters.usage(key)).toEqual({ usedUnits: toCountedUnits('100.00'), usedCount: 1 });
    expect((await store.get('t1', record.paymentId))?.limits?.state).toBe('released');
  });

  it('keeps what a settled transfer counted', async () => {
    const { record, key } = await cancelledAndCounted();
    await listenerAt(NOW).transferFinal({ ...record, status: 'AcceptedSettlementCompleted' });
    expect(await counters.usage(key)).toEqual({ usedUnits: toCountedUnits('350.00'), usedCount: 2 });
  });
});
