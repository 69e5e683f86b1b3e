import type { CreditTransferRequest } from '../credit-transfers/credit-transfer.ts';
import type { Limit, PaymentControls } from './payment-controls.ts';

/**
 * The limits of a tenant's payment controls as they bear on one transfer (docs/approvals.md).
 * Amounts are counted as integers (BigInt) of hundred-millionths, the finest an amount may be
 * written in (8 fractional digits), so no sum ever passes through binary floating point and no
 * currency table is needed to count.
 */

/** The periods counted across transfers; a `transaction` limit is checked on the transfer alone. */
export type CountedPeriod = 'day' | 'month';

/** One counter a transfer counts in: its debtor account's, in its currency, for one calendar period (UTC). */
export interface LimitCounterKey {
  tenant: string;
  debtorAccountId: string;
  currency: string;
  period: CountedPeriod;
  /** `YYYY-MM-DD` for a day, `YYYY-MM` for a month. */
  start: string;
}

/** What a counter holds: the amount (in COUNTED_UNITS) and number of transfers counted in its period. */
export interface LimitUsage {
  usedUnits: bigint;
  usedCount: number;
}

/** A limit as it applied to a transfer, kept on the transfer: a later change of the controls leaves it alone. */
export interface AppliedLimit {
  /** Absent on transfers held before it was kept: the transfer's own currency then. */
  currency?: string;
  period: Limit['period'];
  maxAmount?: string;
  maxCount?: number;
  onBreach: Limit['onBreach'];
  /** Absent when the limit covers every account of the tenant. */
  debtorAccountId?: string;
}

/**
 * A transfer's standing with its limits, kept on the transfer:
 * - `reserving`: the initiation reserves its counters now (the reconciler finishes it after a crash);
 * - `held`: counted in `counters` (kept when it settles, given back when it ends otherwise);
 * - `onApproval`: it broke a limit whose breach asks for approval; it counts once approved;
 * - `refused`: it broke a limit whose breach rejects it; it counts nowhere;
 * - `releasing`: it ended Rejected or Cancelled, and one caller (claimed at `releasingSince`) gives
 *   back what it counted;
 * - `released`: given back.
 */
export interface LimitHold {
  state: 'reserving' | 'held' | 'onApproval' | 'refused' | 'releasing' | 'released';
  /** When the caller giving back claimed it: another takes over only after RELEASE_LEASE_SECONDS. */
  releasingSince?: string;
  limits: AppliedLimit[];
  /** The period starts it counts (or would count) in. */
  counters: { period: CountedPeriod; start: string }[];
  /** Seconds it may wait for approval should a limit's breach ask for one (the controls' `approvalExpiry`). */
  approvalExpirySeconds: number;
}

export const periodStart = (period: CountedPeriod, at: Date): string =>
  at.toISOString().slice(0, period === 'day' ? 10 : 7);

/** The first instant of the period after the one starting at `start`. */
export const periodEnd = (period: CountedPeriod, start: string): Date => {
  const [year, month, day] = start.split('-').map(Number) as [number, number, number?];
  return period === 'day'
    ? new Date(Date.UTC(year, month - 1, (day ?? 1) + 1))
    : new Date(Date.UTC(year, month, 1));
};

/** Fractional digits of the units amounts are counted in (an amount has at most 8). */
export const COUNTED_DIGITS = 8;
const SCALE = 10n ** BigInt(COUNTED_DIGITS);

/** An amount (`1234.5`) in counted units (123450000000). */
export const toCountedUnits = (amount: string): bigint => {
  const [integer = '0', fraction = ''] = amount.replace(/^-/, '').split('.');
  const magnitude = BigInt(integer) * SCALE + BigInt(fraction.padEnd(COUNTED_DIGITS, '0') || '0');
  return amount.startsWith('-') ? -magnitude : magnitude;
};

/**
 * Counted units as an amount with `digits` fractional digits (the currency's minor unit), which
 * every counted amount obeys (`1234.50` for 2 digits).
 */
export const fromCountedUnits = (units: bigint, digits: number): string => {
  const sign = units < 0n ? '-' : '';
  const magnitude = units < 0n ? -units : units;
  const integer = (magnitude / SCALE).toString();
  const fraction = (magnitude % SCALE).toString().padStart(COUNTED_DIGITS, '0').slice(0, digits);
  return digits === 0 ? `${sign}${integer}` : `${sign}${integer}.${fraction}`;
};

/** The limits of the controls that cover a transfer from `debtorAccountId` in `currency`. */
export const limitsCovering = (
  controls: Pick<PaymentControls, 'limits'>,
  debtorAccountId: string,
  currency: string,
): Limit[] =>
  controls.limits.filter(
    (limit) =>
      limit.currency === currency &&
      (limit.debtorAccountId === undefined || limit.debtorAccountId === debtorAccountId),
  );

const applied = ({
  currency,
  period,
  maxAmount,
  maxCount,
  onBreach,
  debtorAccountId,
}: Limit): AppliedLimit => ({
  currency,
  period,
  ...(maxAmount !== undefined && { maxAmount }),
  ...(maxCount !== undefined && { maxCount }),
  onBreach,
  ...(debtorAccountId !== undefined && { debtorAccountId }),
});

/**
 * The hold a new transfer starts with, or undefined when no limit covers it. A transfer that names
 * no currency may be in any: every limit of its account, whatever its currency, covers it, and it
 * cannot be counted against one (it is taken as past them: `uncountable`).
 */
export const limitHoldFor = (
  controls: Pick<PaymentControls, 'limits'>,
  transfer: Pick<CreditTransferRequest, 'debtorAccountId' | 'currency'>,
  now: Date,
  approvalExpirySeconds: number,
): LimitHold | undefined => {
  const covering =
    transfer.currency === undefined
      ? controls.limits.filter(
          (limit) =>
            limit.debtorAccountId === undefined || limit.debtorAccountId === transfer.debtorAccountId,
        )
      : limitsCovering(controls, transfer.debtorAccountId, transfer.currency);
  const limits = covering.map(applied);
  if (limits.length === 0) return undefined;
  return {
    state: 'reserving',
    limits,
    counters: transfer.currency === undefined ? [] : countersFor(limits, now),
    approvalExpirySeconds,
  };
};

/** The counters limits need, at `at`: one per counted period any of them has. */
export const countersFor = (limits: readonly AppliedLimit[], at: Date): LimitHold['counters'] =>
  (['day', 'month'] as const)
    .filter((period) => limits.some((limit) => limit.period === period))
    .map((period) => ({ period, start: periodStart(period, at) }));

/** The most a counter may hold before a transfer of `amountUnits` is counted, per the limits of its period. */
export interface CounterBound {
  /** Largest amount already used that still admits the transfer (negative: nothing admits it). */
  maxUsedUnits?: bigint;
  /** Largest count already used that still admits the transfer. */
  maxUsedCount?: number;
}

export const counterBound = (
  limits: readonly AppliedLimit[],
  period: CountedPeriod,
  amountUnits: bigint,
): CounterBound => {
  let bound: CounterBound = {};
  for (const limit of limits) {
    if (limit.period !== period) continue;
    if (limit.maxAmount !== undefined) {
      const room = toCountedUnits(limit.maxAmount) - amountUnits;
      if (bound.maxUsedUnits === undefined || room < bound.maxUsedUnits)
        bound = { ...bound, maxUsedUnits: room };
    }
    if (limit.maxCount !== undefined) {
      const room = limit.maxCount - 1;
      if (bound.maxUsedCount === undefined || room < bound.maxUsedCount)
        bound = { ...bound, maxUsedCount: room };
    }
  }
  return bound;
};

/** Whether one limit refuses a transfer of `amountUnits` on top of `usage`. */
const breaks = (limit: AppliedLimit, amountUnits: bigint, usage: LimitUsage): boolean =>
  (limit.maxAmount !== undefined && usage.usedUnits + amountUnits > toCountedUnits(limit.maxAmount)) ||
  (limit.maxCount !== undefined && usage.usedCount + 1 > limit.maxCount);

const NOTHING_USED: LimitUsage = { usedUnits: 0n, usedCount: 0 };

/** The limits a transfer breaks on its own, whatever it counts with (the `transaction` ones). */
export const transactionBreaches = (limits: readonly AppliedLimit[], amountUnits: bigint): AppliedLimit[] =>
  limits.filter((limit) => limit.period === 'transaction' && breaks(limit, amountUnits, NOTHING_USED));

/** The limits of `period` a transfer breaks on top of what its counter holds. */
export const periodBreaches = (
  limits: readonly AppliedLimit[],
  period: CountedPeriod,
  amountUnits: bigint,
  usage: LimitUsage,
): AppliedLimit[] => limits.filter((limit) => limit.period === period && breaks(limit, amountUnits, usage));

/** What breaking `breached` does: any limit that rejects decides; otherwise the transfer waits for approval. */
export const breachOutcome = (breached: readonly AppliedLimit[]): 'reject' | 'approval' =>
  breached.some((limit) => limit.onBreach === 'reject') ? 'reject' : 'approval';
