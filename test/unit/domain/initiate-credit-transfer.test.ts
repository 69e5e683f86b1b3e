import { describe, expect, it } from 'vitest';
import { IdempotencyKeyReusedError, InvalidRequestError } from '#domain/commons/errors';
import type { Clock } from '#domain/commons/ports';
import { initiateCreditTransfer } from '#domain/credit-transfers/initiate-credit-transfer';
import { derivedPaymentId } from '#domain/credit-transfers/payment-id';
import type { CreditTransferRecord, CreditTransferStore } from '#domain/credit-transfers/ports';
import { minimalCreditTransfer } from '../../fixtures/credit-transfers.ts';

/** An in-memory store with the same conditional-create contract as the DynamoDB one. */
const memoryStore = (): CreditTransferStore & { records: Map<string, CreditTransferRecord> } => {
  const records = new Map<string, CreditTransferRecord>();
  return {
    records,
    create: async (record) => {
      const key = `${record.tenant}/${record.paymentId}`;
      if (records.has(key)) return false;
      records.set(key, structuredClone(record));
      return true;
    },
    get: async (tenant, paymentId) => structuredClone(records.get(`${tenant}/${paymentId}`)),
  };
};

const clockAt = (iso: string): Clock => ({ now: () => new Date(iso) });
const command = (body: unknown, idempotencyKey?: string) => ({
  tenant: 'acme',
  clientId: 'acme-client',
  body,
  servicer: {},
  ...(idempotencyKey !== undefined && { idempotencyKey }),
});

describe('initiation rules that depend on the day', () => {
  it('accepts a valueDate of today in UTC, even one minute before midnight', async () => {
    const store = memoryStore();
    const result = await initiateCreditTransfer(
      { store, clock: clockAt('2026-11-22T23:59:00Z') },
      command(minimalCreditTransfer({ valueDate: '2026-11-22' })),
    );
    expect(result.creditTransfer.status).toBe('Received');
  });

  it('refuses yesterday one minute after midnight UTC', async () => {
    const attempt = initiateCreditTransfer(
      { store: memoryStore(), clock: clockAt('2026-11-23T00:01:00Z') },
      command(minimalCreditTransfer({ valueDate: '2026-11-22' })),
    );
    await expect(attempt).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(attempt).rejects.toMatchObject({ invalidParams: [{ name: 'valueDate' }] });
  });

  it('still replays an accepted payment once its valueDate has passed', async () => {
    const store = memoryStore();
    const body = minimalCreditTransfer({ valueDate: '2026-11-22' });
    const first = await initiateCreditTransfer(
      { store, clock: clockAt('2026-11-22T12:00:00Z') },
      command(body, 'k1'),
    );
    const retry = await initiateCreditTransfer(
      { store, clock: clockAt('2026-11-23T12:00:00Z') },
      command(body, 'k1'),
    );
    expect(retry.replayed).toBe(true);
    expect(retry.creditTransfer.paymentId).toBe(first.creditTransfer.paymentId);
    expect(store.records.size).toBe(1);
  });

  it('refuses a reused key with another body even when the new body also breaks a rule', async () => {
    const store = memoryStore();
    const clock = clockAt('2026-11-22T12:00:00Z');
    await initiateCreditTransfer({ store, clock }, command(minimalCreditTransfer(), 'k2'));
    await expect(
      initiateCreditTransfer({ store, clock }, command(minimalCreditTransfer({ amount: '0' }), 'k2')),
    ).rejects.toBeInstanceOf(IdempotencyKeyReusedError);
  });
});

describe('paymentId', () => {
  it('derives the same UUID for the same tenant and key, and another for another tenant', () => {
    const id = derivedPaymentId('acme', 'initiate', 'key-1');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(derivedPaymentId('acme', 'initiate', 'key-1')).toBe(id);
    expect(derivedPaymentId('other', 'initiate', 'key-1')).not.toBe(id);
    expect(derivedPaymentId('acme', 'cancel', 'key-1')).not.toBe(id);
  });
});

describe('a write whose answer was lost', () => {
  /** The first create is applied but reported as refused, as when the SDK retries a write that had succeeded. */
  const storeLosingFirstAnswer = () => {
    const store = memoryStore();
    let first = true;
    const create = store.create;
    store.create = async (record) => {
      if (first) {
        first = false;
        await create(record);
        return false;
      }
      return create(record);
    };
    return store;
  };

  it('answers 202 for the payment it stored, without a key, instead of failing', async () => {
    const store = storeLosingFirstAnswer();
    const result = await initiateCreditTransfer(
      { store, clock: clockAt('2026-11-22T12:00:00Z') },
      command(minimalCreditTransfer()),
    );
    expect(result.replayed).toBe(false);
    expect(store.records.size).toBe(1);
  });

  it('does not call its own first answer a replay, with a key', async () => {
    const store = storeLosingFirstAnswer();
    const result = await initiateCreditTransfer(
      { store, clock: clockAt('2026-11-22T12:00:00Z') },
      command(minimalCreditTransfer(), 'lost-answer'),
    );
    expect(result.replayed).toBe(false);
  });
});

describe('the cost of a replay', () => {
  it('is one refused write and one read', async () => {
    const store = memoryStore();
    const clock = clockAt('2026-11-22T12:00:00Z');
    await initiateCreditTransfer({ store, clock }, command(minimalCreditTransfer(), 'counted'));
    let reads = 0;
    let writes = 0;
    const { get, create } = store;
    store.get = (...args) => {
      reads++;
      return get(...args);
    };
    store.create = (record) => {
      writes++;
      return create(record);
    };
    const replay = await initiateCreditTransfer(
      { store, clock },
      command(minimalCreditTransfer(), 'counted'),
    );
    expect(replay.replayed).toBe(true);
    expect({ reads, writes }).toEqual({ reads: 1, writes: 1 });
  });
});

describe('the workflow a replay starts', () => {
  it('starts the lifecycle again only while the transfer is still Received (the fast path runs a repeated start again)', async () => {
    const store = memoryStore();
    const clock = clockAt('2026-11-22T12:00:00Z');
    const starts: string[] = [];
    const workflow = { start: async (start: { trigger: string }) => void starts.push(start.trigger) };
    const first = await initiateCreditTransfer(
      { store, clock, workflow },
      command(minimalCreditTransfer(), 'replayed'),
    );
    // The first start failed, say: the replay starts it.
    await initiateCreditTransfer({ store, clock, workflow }, command(minimalCreditTransfer(), 'replayed'));
    expect(starts).toEqual(['initiation', 'initiation']);
    // Under way: an execution has it (or the reconciler will); a replay starts none.
    const key = `acme/${first.creditTransfer.paymentId}`;
    const record = store.records.get(key) as CreditTransferRecord;
    store.records.set(key, { ...record, status: 'AcceptedTechnicalValidation' });
    await initiateCreditTransfer({ store, clock, workflow }, command(minimalCreditTransfer(), 'replayed'));
    expect(starts).toEqual(['initiation', 'initiation']);
  });
});
