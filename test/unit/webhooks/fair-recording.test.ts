import { describe, expect, it } from 'vitest';
import type { StatusChangedEvent } from '#domain/credit-transfers/ports';
import { inTenantTurns } from '#local/webhook-delivery';

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
