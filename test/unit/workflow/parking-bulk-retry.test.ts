import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { systemClock } from '#domain/commons/ports';
import { unparkCreditTransfers } from '#domain/credit-transfers/parked-transfers';
import { initiate, lifecycleStore, startWorkflowEnvironment, stored, TENANT } from './harness.ts';

vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
});

let environment: Awaited<ReturnType<typeof startWorkflowEnvironment>>;
beforeAll(async () => {
  environment = await startWorkflowEnvironment();
});
afterAll(async () => {
  await environment?.close();
});

/** A transfer the connector's outage parked at `at` (no workflow started: the reconciler's to drive). */
const parkedAt = async (at: string): Promise<string> => {
  const paymentId = await initiate(undefined);
  expect(
    await lifecycleStore().park(TENANT, paymentId, 'Received', {
      at,
      attempts: 5,
      reason: 'ConnectorUnavailableError',
    }),
  ).toBe(true);
  return paymentId;
};

describe('retry --all-parked: every parked transfer back to the reconciler at once', () => {
  it('unparks those parked since the given time, leaves older ones parked, and counts each', async () => {
    const older = await parkedAt('2026-12-01T08:00:00.000Z');
    const outage = [await parkedAt('2026-12-07T09:00:00.000Z'), await parkedAt('2026-12-07T09:30:00.000Z')];
    const deps = { parked: lifecycleStore(), clock: systemClock };

    expect(await unparkCreditTransfers(deps, new Date('2026-12-07T09:00:00Z'))).toEqual({
      retried: 2,
      older: 1,
      moved: 0,
    });
    for (const paymentId of outage) {
      const record = await stored(paymentId);
      expect(record.parked).toBeUndefined();
      // Due again now: the reconciler's next run starts it.
      expect(Date.parse(record.nextCheckAt as string)).toBeLessThanOrEqual(Date.now());
    }
    expect((await stored(older)).parked).toBeDefined();

    // Without --since, every one still parked.
    expect(await unparkCreditTransfers(deps)).toEqual({ retried: 1, older: 0, moved: 0 });
    expect((await stored(older)).parked).toBeUndefined();
  });

  it('counts as moved a transfer retried by someone else after the list was read, and writes nothing for it', async () => {
    const paymentId = await parkedAt('2026-12-07T10:00:00.000Z');
    const store = lifecycleStore();
    const listed = await store.parked(10_000);
    // Another operator retries it between this run's list and its write.
    expect(await store.unpark(TENANT, paymentId, new Date())).toBe(true);
    const readBefore = { parked: async () => listed, unpark: store.unpark.bind(store) };
    expect(await unparkCreditTransfers({ parked: readBefore, clock: systemClock })).toEqual({
      retried: 0,
      older: 0,
      moved: listed.length,
    });
    expect((await stored(paymentId)).parked).toBeUndefined();
  });
});
