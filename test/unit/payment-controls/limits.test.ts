import { describe, expect, it } from 'vitest';
import {
  type AppliedLimit,
  breachOutcome,
  counterBound,
  countersFor,
  fromCountedUnits,
  limitHoldFor,
  periodBreaches,
  periodEnd,
  periodStart,
  toCountedUnits,
  transactionBreaches,
} from '#domain/payment-controls/limits';
import { EMPTY_PAYMENT_CONTROLS } from '#domain/payment-controls/payment-controls';

const day = (bounds: Partial<AppliedLimit>): AppliedLimit => ({
  period: 'day',
  onBreach: 'reject',
  ...bounds,
});

describe('limits', () => {
  it('counts amounts exactly in hundred-millionths, and writes them back in a currency’s minor unit', () => {
    expect(toCountedUnits('1234.5')).toBe(123_450_000_000n);
    expect(toCountedUnits('1234')).toBe(123_400_000_000n);
    expect(toCountedUnits('0.01')).toBe(1_000_000n);
    expect(toCountedUnits('0.00000001')).toBe(1n);
    expect(toCountedUnits('-2.50')).toBe(-250_000_000n);
    expect(toCountedUnits('9999999999999.99999999')).toBe(999_999_999_999_999_999_999n);
    expect(fromCountedUnits(123_450_000_000n, 2)).toBe('1234.50');
    expect(fromCountedUnits(5_000_000n, 2)).toBe('0.05');
    expect(fromCountedUnits(0n, 2)).toBe('0.00');
    expect(fromCountedUnits(50_000_000_000n, 0)).toBe('500');
    expect(fromCountedUnits(123_400_000n, 3)).toBe('1.234');
    expect(fromCountedUnits(-250_000_000n, 2)).toBe('-2.50');
  });

  it('names calendar periods in UTC and where they end', () => {
    const at = new Date('2026-12-31T23:59:59.999Z');
    expect(periodStart('day', at)).toBe('2026-12-31');
    expect(periodStart('month', at)).toBe('2026-12');
    expect(periodEnd('day', '2026-12-31').toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(periodEnd('month', '2026-12').toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(periodEnd('month', '2026-02').toISOString()).toBe('2026-03-01T00:00:00.000Z');
    expect(periodEnd('day', '2028-02-28').toISOString()).toBe('2028-02-29T00:00:00.000Z');
  });

  it('holds a transfer to the limits of its account and currency, and those of every account', () => {
    const controls = {
      ...EMPTY_PAYMENT_CONTROLS,
      approvalExpiry: 'PT1H',
      limits: [
        {
          debtorAccountId: 'A',
          currency: 'EUR',
          period: 'day' as const,
          maxAmount: '10.00',
          onBreach: 'reject' as const,
        },
        {
          debtorAccountId: 'B',
          currency: 'EUR',
          period: 'day' as const,
          maxAmount: '20.00',
          onBreach: 'reject' as const,
        },
        { currency: 'EUR', period: 'month' as const, maxCount: 5, onBreach: 'approval' as const },
        { currency: 'USD', period: 'transaction' as const, maxAmount: '1.00', onBreach: 'reject' as const },
      ],
    };
    const hold = limitHoldFor(
      controls,
      { debtorAccountId: 'A', currency: 'EUR' },
      new Date('2026-12-08T10:00:00Z'),
      3600,
    );
    expect(hold).toEqual({
      state: 'reserving',
      limits: [
        { currency: 'EUR', debtorAccountId: 'A', period: 'day', maxAmount: '10.00', onBreach: 'reject' },
        { currency: 'EUR', period: 'month', maxCount: 5, onBreach: 'approval' },
      ],
      counters: [
        { period: 'day', start: '2026-12-08' },
        { period: 'month', start: '2026-12' },
      ],
      approvalExpirySeconds: 3600,
    });
    expect(limitHoldFor(controls, { debtorAccountId: 'A', currency: 'CHF' }, new Date(), 60)).toBeUndefined();
    // Without a currency, every limit of the account covers it, and it counts in no counter.
    expect(limitHoldFor(controls, { debtorAccountId: 'A' }, new Date(), 60)).toMatchObject({
      limits: [
        { currency: 'EUR', debtorAccountId: 'A', period: 'day' },
        { currency: 'EUR', period: 'month' },
        { currency: 'USD', period: 'transaction' },
      ],
      counters: [],
    });
    expect(limitHoldFor(controls, { debtorAccountId: 'C', currency: 'CHF' }, new Date(), 60)).toBeUndefined();
    expect(countersFor([{ period: 'transaction', onBreach: 'reject' }], new Date())).toEqual([]);
  });

  it('bounds a counter by the tightest limit of its period', () => {
    const limits = [
      day({ maxAmount: '100.00' }),
      day({ maxAmount: '80.00', maxCount: 3 }),
      day({ maxCount: 5 }),
      { period: 'month', maxAmount: '1.00', onBreach: 'reject' } as AppliedLimit,
    ];
    const units = (amount: string) => toCountedUnits(amount);
    expect(counterBound(limits, 'day', units('30'))).toEqual({ maxUsedUnits: units('50'), maxUsedCount: 2 });
    expect(counterBound(limits, 'day', units('90'))).toEqual({ maxUsedUnits: units('-10'), maxUsedCount: 2 });
    expect(counterBound([], 'day', 1n)).toEqual({});
  });

  it('names the limits a transfer breaks, and what breaking them does', () => {
    const rejecting = day({ maxAmount: '100.00' });
    const approving = day({ maxCount: 2, onBreach: 'approval' });
    const perTransfer: AppliedLimit = { period: 'transaction', maxAmount: '50.00', onBreach: 'approval' };
    const limits = [rejecting, approving, perTransfer];
    const units = (amount: string) => toCountedUnits(amount);
    expect(transactionBreaches(limits, units('50.00'))).toEqual([]);
    expect(transactionBreaches(limits, units('50.01'))).toEqual([perTransfer]);
    const used = { usedUnits: units('90.00'), usedCount: 1 };
    expect(periodBreaches(limits, 'day', units('10.00'), used)).toEqual([]);
    expect(periodBreaches(limits, 'day', units('10.01'), used)).toEqual([rejecting]);
    expect(periodBreaches(limits, 'day', 1n, { usedUnits: 0n, usedCount: 2 })).toEqual([approving]);
    expect(breachOutcome([approving])).toBe('approval');
    expect(breachOutcome([approving, rejecting])).toBe('reject');
  });
});
