import { describe, expect, it } from 'vitest';
import type { StatusChangedEvent } from '#domain/credit-transfers/ports';
import { BusBacklog, type BusLine, inTenantTurns, ROUND_PER_TENANT } from '#local/webhook-delivery';

const change = (tenant: string, paymentId: string, sequence: number): StatusChangedEvent => ({
  eventId: `${tenant}-${paymentId}-${sequence}`,
  tenant,
  paymentId,
  sequence,
  status: sequence === 0 ? 'Received' : 'AcceptedSettlementCompleted',
  date: '2026-01-05T10:00:00.000Z',
  actor: 'workflow',
});

describe('recording status events for webhooks locally', () => {
  it("puts another tenant's first change within the first turn, however large one tenant's flood ahead of it", () => {
    const flood = Array.from({ length: 5000 }, (_, index) => [
      change('flooding', `p${index}`, 0),
      change('flooding', `p${index}`, 1),
    ]).flat();
    const ordered = inTenantTurns([...flood, change('quiet', 'q1', 0), change('other', 'o1', 0)]);

    const firstOf = (tenant: string) => ordered.findIndex((group) => group[0]?.tenant === tenant);
    // Three tenants: each is served within the first round of three.
    expect(firstOf('quiet')).toBeLessThan(3);
    expect(firstOf('other')).toBeLessThan(3);
    // Nothing lost, and one transfer's changes stay together and in order.
    expect(ordered.flat()).toHaveLength(flood.length + 2);
    for (const group of ordered) {
      expect(new Set(group.map((entry) => entry.paymentId)).size).toBe(1);
      expect(group.map((entry) => entry.sequence)).toEqual([...group.map((entry) => entry.sequence)].sort());
    }
  });
});

describe('the local bus backlog', () => {
  const line = (index: number, tenant: string, paymentId = `${tenant}-${index}`): BusLine => ({
    start: index * 100,
    end: index * 100 + 100,
    tenant,
    paymentId,
  });

  it("takes another tenant's change in the first round, however long one tenant's backlog ahead of it", () => {
    const backlog = new BusBacklog(0);
    const flood = Array.from({ length: 10_000 }, (_, index) => line(index, 'flooding'));
    const quiet = line(10_000, 'quiet');
    backlog.add([...flood, quiet].map((entry) => ({ end: entry.end, line: entry })));

    const round = backlog.round();
    expect(round).toContain(quiet);
    expect(round.filter((entry) => entry.tenant === 'flooding')).toEqual(flood.slice(0, ROUND_PER_TENANT));
  });

  it('moves the recorded offset only past lines all recorded, and takes a change that failed again', () => {
    const backlog = new BusBacklog(0);
    const lines = [line(0, 'a', 'p'), line(1, 'b'), line(2, 'a', 'p')];
    backlog.add([...lines.map((entry) => ({ end: entry.end, line: entry })), { end: 400 }]);

    // b's change and a's second are recorded, a's first is not: nothing before it may be passed.
    backlog.markRecorded(lines[1] as BusLine);
    backlog.markRecorded(lines[2] as BusLine);
    expect(backlog.settle()).toBe(0);
    expect(backlog.round()).toEqual([lines[0]]);
    backlog.markRecorded(lines[0] as BusLine);
    // Past every recorded change and the line after them that is none.
    expect(backlog.settle()).toBe(400);
    expect(backlog.round()).toEqual([]);
  });
});
