import { describe, expect, it } from 'vitest';
import { toStatusChangedEvent } from '#domain/credit-transfers/lifecycle';
import type { StatusChange } from '#domain/credit-transfers/ports';
import type { PendingApproval } from '#domain/payment-controls/approval';
import { type BusRecordingDependencies, recordStatusEventFromBus } from '#domain/webhooks/webhook-delivery';
import { eventIdsOfHistory } from '#domain/webhooks/webhook-event';
import { deliveryDeps, endpointRecord, MemoryWebhookStore, ScriptedSender } from './fakes.ts';

const HISTORY: StatusChange[] = [
  { status: 'Pending', date: '2026-03-02T10:00:00.000Z', actor: 'initiator' },
  { status: 'Received', date: '2026-03-02T10:05:00.000Z', actor: 'workflow' },
  { status: 'AcceptedTechnicalValidation', date: '2026-03-02T10:05:01.000Z', actor: 'workflow' },
];
const APPROVAL: PendingApproval = {
  rule: 'large EUR payments',
  approvalsRequired: 2,
  approvals: [
    { clientId: 'approver-1', decision: 'approve', at: '2026-03-02T10:01:00.000Z', tokenId: 'jti-1' },
    { clientId: 'approver-2', decision: 'approve', at: '2026-03-02T10:05:00.000Z', tokenId: 'jti-2' },
  ],
  expiresAt: '2026-03-03T10:00:00.000Z',
};

/** Recording from the bus with the transfer as stored now: every change made, both approvals in. */
const recording = (store: MemoryWebhookStore): BusRecordingDependencies => ({
  ...deliveryDeps(store, new ScriptedSender()),
  histories: { history: async () => HISTORY },
  approvals: { approval: async () => APPROVAL },
  onForged: () => {
    throw new Error('no event here is forged');
  },
});

const busEvent = (sequence: number) =>
  JSON.parse(
    JSON.stringify(
      toStatusChangedEvent(
        { tenant: 't1', paymentId: 'p1', history: HISTORY },
        sequence,
        HISTORY[sequence] as StatusChange,
      ),
    ),
  );

const bodies = (store: MemoryWebhookStore) =>
  [...store.eventRecords.values()].map((record) => JSON.parse(record.body));

describe('approval events from the published history', () => {
  it('tells each change to or from Pending with the approval as it stood then, however late it is recorded', async () => {
    const store = new MemoryWebhookStore();
    const deps = recording(store);
    for (const sequence of [0, 1, 2]) await recordStatusEventFromBus(deps, busEvent(sequence));

    const events = bodies(store);
    expect(events.map((event) => [event.type, event.data.status ?? null])).toEqual([
      ['credit-transfer.status-changed', 'Pending'],
      ['credit-transfer.approval-required', null],
      ['credit-transfer.status-changed', 'Received'],
      ['credit-transfer.approved', null],
      ['credit-transfer.status-changed', 'AcceptedTechnicalValidation'],
    ]);
    const [toPending, required, fromPending, approved, later] = events;
    // Recorded after both decisions, the change to Pending still shows none: there was none then.
    expect(required.data).toEqual({
      paymentId: 'p1',
      date: '2026-03-02T10:00:00.000Z',
      sequence: 0,
      approval: {
        rule: 'large EUR payments',
        approvalsRequired: 2,
        approvals: [],
        expiresAt: '2026-03-03T10:00:00.000Z',
      },
    });
    expect(toPending.data.approval).toEqual(required.data.approval);
    // The approvals that moved it on, as clients see them (no token ids).
    expect(approved.data.approval.approvals).toEqual([
      { clientId: 'approver-1', decision: 'approve', at: '2026-03-02T10:01:00.000Z' },
      { clientId: 'approver-2', decision: 'approve', at: '2026-03-02T10:05:00.000Z' },
    ]);
    expect(approved.data).toMatchObject({ paymentId: 'p1', date: '2026-03-02T10:05:00.000Z', sequence: 1 });
    expect(fromPending.data.approval).toEqual(approved.data.approval);
    expect(later.data.approval).toBeUndefined();
    // The transfer's own events are the ones its history names (the events list by paymentId reads them so).
    expect(new Set(eventIdsOfHistory('t1', 'p1', HISTORY))).toEqual(new Set(events.map((event) => event.id)));
  });

  it('keeps and delivers each approval event once when a change is published again', async () => {
    const store = new MemoryWebhookStore();
    store.endpointRecords.set(
      't1/e1',
      endpointRecord({ id: 'e1', eventTypes: ['credit-transfer.approved'] }),
    );
    const deps = recording(store);
    const first = await recordStatusEventFromBus(deps, busEvent(1));
    const again = await recordStatusEventFromBus(deps, busEvent(1));

    expect(bodies(store).map((event) => event.type)).toEqual([
      'credit-transfer.status-changed',
      'credit-transfer.approved',
    ]);
    // The endpoint picks the approved event only, and gets it once: the second recording finds it kept.
    expect(first?.first.map(({ event }) => event.type)).toEqual(['credit-transfer.approved']);
    expect(again?.first).toEqual([]);
  });
});
