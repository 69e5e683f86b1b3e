import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbLimitCounters } from '#adapters/payment-controls/limit-counters';
import type { LimitCounterKey } from '#domain/payment-controls/limits';
import { type DynaliteTable, startDynaliteTable } from '../../support/dynalite-table.ts';

/** The counters' conditional updates against dynalite: exact bounds, and every write idempotent per transfer. */
const TABLE = 'limit-counters-unit';

let table: DynaliteTable;
let counters: DynamoDbLimitCounters;
let next = 0;
const freshKey = (): LimitCounterKey => ({
  tenant: 'tenant-a',
  debtorAccountId: `ACCOUNT-${++next}`,
  currency: 'EUR',
  period: 'day',
  start: '2026-12-08',
});

beforeAll(async () => {
  table = await startDynaliteTable(TABLE);
  counters = new DynamoDbLimitCounters(table.documents, TABLE);
});

afterAll(async () => {
  await table?.close();
});

describe('limit counters', () => {
  it('counts within the bound and refuses past it, answering the usage it found', async () => {
    const key = freshKey();
    const bound = { maxUsedUnits: 600n, maxUsedCount: 1 };
    expect(await counters.reserve(key, 'p1', 400n, bound)).toEqual({ counted: true });
    expect(await counters.reserve(key, 'p2', 400n, bound)).toEqual({ counted: true });
    expect(await counters.reserve(key, 'p3', 400n, bound)).toEqual({
      counted: false,
      usage: { usedUnits: 800n, usedCount: 2 },
    });
    // One larger than the limit alone is refused without a write.
    expect(await counters.reserve(freshKey(), 'p4', 400n, { maxUsedUnits: -1n })).toEqual({
      counted: false,
      usage: { usedUnits: 0n, usedCount: 0 },
    });
  });

  it('counts a repeat once, and gives back a repeated release once', async () => {
    const key = freshKey();
    await counters.reserve(key, 'p1', 250n, { maxUsedUnits: 10_000n });
    expect(await counters.reserve(key, 'p1', 250n, { maxUsedUnits: 10_000n })).toEqual({ counted: true });
    expect(await counters.usage(key)).toEqual({ usedUnits: 250n, usedCount: 1 });
    await counters.acknowledge(key, 'p1');
    await counters.release(key, 'p1', 250n);
    await counters.release(key, 'p1', 250n);
    expect(await counters.usage(key)).toEqual({ usedUnits: 0n, usedCount: 0 });
  });

  it('counts afresh a transfer counted and given back by an attempt that stopped before its record noted either', async () => {
    const key = freshKey();
    await counters.reserve(key, 'p1', 300n, 'unbounded');
    await counters.release(key, 'p1', 300n);
    expect(await counters.usage(key)).toEqual({ usedUnits: 0n, usedCount: 0 });
    expect(await counters.reserve(key, 'p1', 300n, 'unbounded')).toEqual({ counted: true });
    expect(await counters.usage(key)).toEqual({ usedUnits: 300n, usedCount: 1 });
  });

  it('counts past the bound when unbounded (approved past the limit), and never creates a counter by a release', async () => {
    const key = freshKey();
    await counters.reserve(key, 'p1', 900n, { maxUsedUnits: 100n });
    expect(await counters.reserve(key, 'p2', 900n, 'unbounded')).toEqual({ counted: true });
    expect(await counters.usage(key)).toEqual({ usedUnits: 1800n, usedCount: 2 });
    const untouched = freshKey();
    await counters.release(untouched, 'p1', 900n);
    expect(await counters.usage(untouched)).toEqual({ usedUnits: 0n, usedCount: 0 });
  });

  it('keeps amounts past 2^53 minor units exact', async () => {
    const key = freshKey();
    const large = 9_007_199_254_740_993n;
    await counters.reserve(key, 'p1', large, 'unbounded');
    await counters.reserve(key, 'p2', 1n, 'unbounded');
    expect(await counters.usage(key)).toEqual({ usedUnits: large + 1n, usedCount: 2 });
  });

  it('of 30 racing reservations admits exactly as many as the bound allows', async () => {
    const key = freshKey();
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, index) =>
        counters.reserve(key, `p${index}`, 100n, { maxUsedUnits: 1_100n, maxUsedCount: 20 }),
      ),
    );
    expect(answers.filter((answer) => answer.counted)).toHaveLength(12);
    expect(await counters.usage(key)).toEqual({ usedUnits: 1_200n, usedCount: 12 });
  });
});
