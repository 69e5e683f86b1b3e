import * as z from 'zod/mini';
import { InvalidRequestError } from '../commons/errors.ts';
import type { Clock } from '../commons/ports.ts';
import { parseQuery } from '../commons/query-parameters.ts';
import { described } from '../commons/text.ts';
import { accountIdSchema, currencySchema } from '../credit-transfers/credit-transfer.ts';
import { isActiveCurrency, minorUnitOf } from '../credit-transfers/currencies.ts';
import {
  type CountedPeriod,
  fromCountedUnits,
  type LimitUsage,
  limitsCovering,
  periodEnd,
  periodStart,
  toCountedUnits,
} from './limits.ts';
import { EMPTY_PAYMENT_CONTROLS, type Limit } from './payment-controls.ts';
import type { CurrentControlsReader, LimitCounters } from './ports.ts';

export interface LimitUsageDependencies {
  controls: CurrentControlsReader;
  counters: LimitCounters;
  clock: Clock;
}

export const limitUsageQuerySchema = z.strictObject({
  debtorAccountId: described(accountIdSchema, 'The account whose limits are read.'),
  currency: described(currencySchema, 'The currency of the limits read.'),
});

/** One limit with what its current period has used: the amounts counted include transfers still in flight. */
export interface LimitUsageView extends Limit {
  periodStart: string;
  periodEnd: string;
  usedAmount: string;
  usedCount: number;
  remainingAmount?: string;
  remainingCount?: number;
}

const atLeastZero = (value: bigint): bigint => (value < 0n ? 0n : value);

/**
 * The current period of each day and month limit that covers the account in the currency, with
 * what it has used and what remains (never below zero: an approval may take it past its limit).
 * A `transaction` limit counts nothing across transfers, so it has no usage to show.
 */
export const limitUsage = async (
  { controls, counters, clock }: LimitUsageDependencies,
  tenant: string,
  parameters: Readonly<Record<string, readonly string[]>>,
): Promise<{ limits: LimitUsageView[] }> => {
  const { debtorAccountId, currency } = parseQuery(limitUsageQuerySchema, parameters);
  if (!isActiveCurrency(currency)) {
    throw new InvalidRequestError('A query parameter is not valid', [
      { name: 'currency', reason: 'must be an active ISO 4217 currency code' },
    ]);
  }
  const digits = minorUnitOf(currency) ?? 0;
  const now = clock.now();
  const current = (await controls.current(tenant))?.controls ?? EMPTY_PAYMENT_CONTROLS;
  const counted = limitsCovering(current, debtorAccountId, currency).filter(
    (limit): limit is Limit & { period: CountedPeriod } => limit.period !== 'transaction',
  );
  const usages = new Map<CountedPeriod, Promise<LimitUsage>>();
  const usageOf = (period: CountedPeriod) => {
    let usage = usages.get(period);
    if (usage === undefined) {
      usage = counters.usage({ tenant, debtorAccountId, currency, period, start: periodStart(period, now) });
      usages.set(period, usage);
    }
    return usage;
  };
  const limits = await Promise.all(
    counted.map(async (limit): Promise<LimitUsageView> => {
      const start = periodStart(limit.period, now);
      const usage = await usageOf(limit.period);
      return {
        ...limit,
        periodStart: new Date(
          `${limit.period === 'day' ? start : `${start}-01`}T00:00:00.000Z`,
        ).toISOString(),
        periodEnd: periodEnd(limit.period, start).toISOString(),
        usedAmount: fromCountedUnits(usage.usedUnits, digits),
        usedCount: usage.usedCount,
        ...(limit.maxAmount !== undefined && {
          remainingAmount: fromCountedUnits(
            atLeastZero(toCountedUnits(limit.maxAmount) - usage.usedUnits),
            digits,
          ),
        }),
        ...(limit.maxCount !== undefined && {
          remainingCount: Math.max(0, limit.maxCount - usage.usedCount),
        }),
      };
    }),
  );
  return { limits };
};
