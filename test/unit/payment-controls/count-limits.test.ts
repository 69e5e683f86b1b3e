import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbLifecycleStore } from '#adapters/credit-transfers/credit-transfer-lifecycle-store';
import { DynamoDbLimitCounters } from '#adapters/payment-controls/limit-counters';
import type { LifecycleStart } from '#domain/credit-transfers/lifecycle';
import type { CreditTransferRecord } from '#domain/credit-transfers/ports';
import type { PendingApproval } from '#domain/payment-controls/approval';
import { countApproved, reserveLimits } from '#domain/payment-controls/count-limits';
import { type LimitCounterKey, limitHoldFor, toCountedUnits } from '#domain/payment-controls/limits';
import type { Limit } from '#domain/payment-controls/payment-controls';
import { type DynaliteTable, startDynaliteTable } from '../../support/dynalite-table.ts';

/**
 * Counting a new transfer against its limits, against dynalite: the decision each outcome writes
 * on the transfer, what the counters hold afterwards, and what is started or announced.
 */
const TABLE = 'count-limits-unit';
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

const day = (bounds: Partial<Limit>): Limit => ({
  currency: 'EUR',
  period: 'day',
  onBreach: 'reject',
  ...bounds,
});
const month = (bounds: Partial<Limit>): Limit => ({
  currency: 'EUR',
  period: 'month',
  onBreach: 'reject',
  ...bounds,
});

/** A transfer stored as an initiation stores it, its limits `reserving`. */
const stored = async (
  limits: Limit[],
  {
    amount = '100.00',
    currency = 'EUR' as string | null,
    approval = undefined as PendingApproval | undefined,
  } = {},
) => {
  const paymentId = `p-${++next}`;
  const debtorAccountId = `ACCOUNT-${next}`;
  const status = approval === undefined ? ('Received' as const) : ('Pending' as const);
  const transfer = {
    paymentMethod: 'CreditTransfer',
    amount,
    debtorAccountId,
    ...(currency !== null && { currency }),
  };
  const hold = limitHoldFor({ limits }, transfer, NOW, 3600);
  const record: CreditTransferRecord = {
    tenant: 't1',
    paymentId,
    clientId: 'initiator',
    createdAt: NOW.toISOString(),
    status,
    statusDate: NOW.toISOString(),
    requestHash: 'h',
    servicer: {},
    transfer,
    history: [{ status, date: NOW.toISOString(), actor: 'initiator' }],
    ...(approval !== undefined && { approval }),
    ...(hold !== undefined && { limits: hold }),
    nextCheckAt: new Date(NOW.getTime() + 120_000).toISOString(),
  };
  expect(await store.create(record)).toBe(true);
  const key = (period: 'day' | 'month'): LimitCounterKey => ({
    tenant: 't1',
    debtorAccountId,
    currency: 'EUR',
    period,
    start: period === 'day' ? '2026-12-08' : '2026-12',
  });
  return { record, key };
};

const driven = () => {
  const started: LifecycleStart[] = [];
  const announced: string[] = [];
  return {
    started,
    announced,
    deps: {
      store,
      counters,
      clock: { now: () => NOW },
      workflow: { start: async (start: LifecycleStart) => void started.push(start) },
      announcer: { announce: async ({ paymentId }: { paymentId: string }) => void announced.push(paymentId) },
    },
  };
};

const units = (amount: string) => toCountedUnits(amount);

describe('counting a new transfer against its limits', () => {
  it('holds it within every limit, counted in its day and month, and starts it', async () => {
    const { record, key } = await stored([day({ maxAmount: '500.00' }), month({ maxCount: 10 })]);
    const { deps, started } = driven();
    const counted = await reserveLimits(deps, record);
    expect(counted.status).toBe('Received');
    expect(counted.limits?.state).toBe('held');
    expect(started).toEqual([{ tenant: 't1', paymentId: record.paymentId, trigger: 'initiation' }]);
    expect(await counters.usage(key('day'))).toEqual({ usedUnits: units('100.00'), usedCount: 1 });
    expect(await counters.usage(key('month'))).toEqual({ usedUnits: units('100.00'), usedCount: 1 });
    // Counted already: a second call changes nothing.
    expect((await reserveLimits(deps, counted)).limits?.state).toBe('held');
    expect(await counters.usage(key('day'))).toEqual({ usedUnits: units('100.00'), usedCount: 1 });
  });

  it('rejects it (AM14) past a rejecting limit, giving back what it counted in the other period', async () => {
    const { record, key } = await stored([day({ maxAmount: '500.00' }), month({ maxAmount: '50.00' })]);
    const { deps, started } = driven();
    const counted = await reserveLimits(deps, record);
    expect(counted).toMatchObject({
      status: 'Rejected',
      statusReason: 'AmountExceedsAgreedLimit',
      statusReasonCode: 'AM14',
      limits: { state: 'refused' },
    });
    expect(started).toEqual([{ tenant: 't1', paymentId: record.paymentId, trigger: 'cancellation' }]);
    expect(await counters.usage(key('day'))).toEqual({ usedUnits: 0n, usedCount: 0 });
    expect(await counters.usage(key('month'))).toEqual({ usedUnits: 0n, usedCount: 0 });
  });

  it('holds it Pending for one approval past a limit whose breach asks for one, counted nowhere, announced', async () => {
    const { record, key } = await stored([day({ maxAmount: '50.00', onBreach: 'approval' })]);
    const { deps, started, announced } = driven();
    const counted = await reserveLimits(deps, record);
    expect(counted).toMatchObject({
      status: 'Pending',
      limits: { state: 'onApproval' },
      approval: {
        rule: 'limit EUR 50.00 per day',
        initiatingClientId: 'initiator',
        approvalsRequired: 1,
        approvals: [],
        expiresAt: '2026-12-08T11:00:00.000Z',
      },
      nextCheckAt: '2026-12-08T11:00:00.000Z',
    });
    expect(started).toEqual([]);
    expect(announced).toEqual([record.paymentId]);
    expect(await counters.usage(key('day'))).toEqual({ usedUnits: 0n, usedCount: 0 });
  });

  it('rejects rather than holds when one breached limit rejects and another asks for approval', async () => {
    const { record } = await stored([
      day({ maxAmount: '50.00', onBreach: 'approval' }),
      { currency: 'EUR', period: 'transaction', maxAmount: '10.00', onBreach: 'reject' },
    ]);
    expect((await reserveLimits(driven().deps, record)).status).toBe('Rejected');
  });

  it('keeps a transfer an approval rule holds Pending, counted while it waits, due at its expiry', async () => {
    const approval: PendingApproval = {
      rule: 'large',
      initiatingClientId: 'initiator',
      approvalsRequired: 2,
      approvals: [],
      expiresAt: '2026-12-09T10:00:00.000Z',
    };
    const { record, key } = await stored([day({ maxAmount: '500.00' })], { approval });
    const { deps, started, announced } = driven();
    const counted = await reserveLimits(deps, record);
    expect(counted).toMatchObject({
      status: 'Pending',
      limits: { state: 'held' },
      nextCheckAt: approval.expiresAt,
    });
    expect(started).toEqual([]);
    expect(announced).toEqual([record.paymentId]);
    expect(await counters.usage(key('day'))).toEqual({ usedUnits: units('100.00'), usedCount: 1 });
  });

  it('takes a transfer that names no currency as past every limit of its account', async () => {
    const { record } = await stored([day({ maxAmount: '1000000.00' })], { currency: null });
    expect(record.limits?.counters).toEqual([]);
    expect((await reserveLimits(driven().deps, record)).status).toBe('Rejected');
  });

  it('gives back what it counted when it was cancelled while being counted', async () => {
    const { record, key } = await stored([day({ maxAmount: '500.00' })]);
    // Cancelled meanwhile (the cancellation wins the race for the record).
    await store.transition('t1', record.paymentId, {
      from: 'Received',
      change: {
        status: 'Cancelled',
        statusReason: 'RequestedByCustomer',
        date: NOW.toISOString(),
        actor: 'initiator',
      },
      nextCheckAt: NOW,
    });
    const { deps, started } = driven();
    const after = await reserveLimits(deps, record);
    expect(after).toMatchObject({ status: 'Cancelled', limits: { state: 'released' } });
    expect(started).toEqual([]);
    expect(await counters.usage(key('day'))).toEqual({ usedUnits: 0n, usedCount: 0 });
  });
});

describe('an approval past a limit', () => {
  it('counts the transfer then, past the limit, in the periods of the approval, and moves it on', async () => {
    const { record } = await stored([day({ maxAmount: '50.00', onBreach: 'approval' })]);
    const held = await reserveLimits(driven().deps, record);
    const approvedAt = new Date('2026-12-10T08:00:00.000Z');
    const moved = await countApproved(driven().deps, held, approvedAt);
    expect(moved).toMatchObject({
      status: 'Received',
      limits: { state: 'held', counters: [{ period: 'day', start: '2026-12-10' }] },
    });
    const key: LimitCounterKey = {
      tenant: 't1',
      debtorAccountId: record.transfer.debtorAccountId,
      currency: 'EUR',
      period: 'day',
      start: '2026-12-10',
    };
    expect(await counters.usage(key)).toEqual({ usedUnits: units('100.00'), usedCount: 1 });
    // Moved on already: a repeat counts nothing again.
    expect(await countApproved(driven().deps, held, approvedAt)).toBeUndefined();
    expect(await counters.usage(key)).toEqual({ usedUnits: units('100.00'), usedCount: 1 });
  });

  it('gives back what it counted when the transfer was cancelled before the approval moved it', async () => {
    const { record } = await stored([day({ maxAmount: '50.00', onBreach: 'approval' })]);
    const held = await reserveLimits(driven().deps, record);
    await store.transition('t1', record.paymentId, {
      from: 'Pending',
      change: {
        status: 'Cancelled',
        statusReason: 'RequestedByCustomer',
        date: NOW.toISOString(),
        actor: 'initiator',
      },
      nextCheckAt: NOW,
    });
    expect(await countApproved(driven().deps, held, NOW)).toBeUndefined();
    const key: LimitCounterKey = {
      tenant: 't1',
      debtorAccountId: record.transfer.debtorAccountId,
      currency: 'EUR',
      period: 'day',
      start: '2026-12-08',
    };
    expect(await counters.usage(key)).toEqual({ usedUnits: 0n, usedCount: 0 });
    expect((await store.get('t1', record.paymentId))?.limits?.state).toBe('released');
  });
});
