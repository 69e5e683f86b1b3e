import { describe, expect, it } from 'vitest';
import { toStatusChangedEvent } from '#domain/credit-transfers/lifecycle';
import type { StatusChange } from '#domain/credit-transfers/ports';
import {
  checkStatusEvent,
  historiesOncePerBatch,
  type TransferHistories,
} from '#domain/webhooks/status-event-check';

const history: StatusChange[] = [
  { status: 'Received', date: '2026-03-02T10:00:00.000Z', actor: 'client-1' },
  { status: 'AcceptedTechnicalValidation', date: '2026-03-02T10:00:01.000Z', actor: 'workflow' },
  { status: 'Rejected', statusReason: 'InsufficientFunds', date: '2026-03-02T10:00:02.000Z', actor: 'rail' },
];
const stored = { tenant: 't1', paymentId: 'p1', history };

class CountingHistories implements TransferHistories {
  reads = 0;
  async history(tenant: string, paymentId: string) {
    this.reads++;
    return tenant === stored.tenant && paymentId === stored.paymentId ? history : undefined;
  }
}

/** The event as it crossed the bus: JSON, so no undefined fields. */
const published = (sequence: number) =>
  JSON.parse(JSON.stringify(toStatusChangedEvent(stored, sequence, history[sequence] as StatusChange)));

describe('status events from the bus', () => {
  it('accepts exactly the events the workflow publishes for the stored history', async () => {
    for (const sequence of [0, 1, 2]) {
      expect(await checkStatusEvent(new CountingHistories(), published(sequence))).toMatchObject({
        accepted: true,
      });
    }
  });

  it('refuses a transfer that does not exist, or not in that tenant', async () => {
    const histories = new CountingHistories();
    expect(await checkStatusEvent(histories, { ...published(1), paymentId: 'p2' })).toEqual({
      accepted: false,
      reason: 'unknown-transfer',
    });
    expect(await checkStatusEvent(histories, { ...published(1), tenant: 't2' })).toEqual({
      accepted: false,
      reason: 'unknown-transfer',
    });
  });

  it('refuses a status the transfer never had, or had at another time, position, reason or id', async () => {
    const histories = new CountingHistories();
    const forgeries = [
      { ...published(2), status: 'AcceptedSettlementCompleted', statusReason: undefined },
      { ...published(2), statusReason: 'BlockedAccount' },
      { ...published(1), date: '2026-03-02T11:00:00.000Z' },
      { ...published(1), sequence: 3 },
      { ...published(1), previousStatus: 'AcceptedCustomerProfile' },
      { ...published(1), eventId: '00000000-0000-8000-8000-000000000001' },
      { ...published(1), actor: 'rail' },
      { ...published(1), extra: true },
    ];
    for (const forged of forgeries) {
      expect(
        await checkStatusEvent(histories, JSON.parse(JSON.stringify(forged))),
        JSON.stringify(forged),
      ).toEqual({
        accepted: false,
        reason: 'not-in-history',
      });
    }
  });

  it('refuses what is no status event at all without reading the table', async () => {
    const histories = new CountingHistories();
    for (const malformed of [
      null,
      'text',
      [],
      {},
      { ...published(1), sequence: -1 },
      { ...published(1), sequence: 1.5 },
    ]) {
      expect(await checkStatusEvent(histories, malformed)).toEqual({ accepted: false, reason: 'malformed' });
    }
    expect(histories.reads).toBe(0);
  });

  it('reads each transfer once per batch, however many of its events the batch holds', async () => {
    const histories = new CountingHistories();
    const batch = historiesOncePerBatch(histories);
    for (const sequence of [0, 1, 2]) await checkStatusEvent(batch, published(sequence));
    expect(histories.reads).toBe(1);
  });
});
