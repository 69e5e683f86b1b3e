import type { Clock } from '../commons/ports.ts';
import { isFinal, STALL_SECONDS, STATUS_REASONS, secondsAfter } from '../credit-transfers/lifecycle.ts';
import type {
  CreditTransferRecord,
  FinalTransferListener,
  LifecycleStore,
  PendingAnnouncer,
  WorkflowStarter,
} from '../credit-transfers/ports.ts';
import { announcePending, startLifecycle } from '../credit-transfers/start-lifecycle.ts';
import type { PendingApproval } from './approval.ts';
import {
  type AppliedLimit,
  breachOutcome,
  counterBound,
  countersFor,
  type LimitCounterKey,
  type LimitHold,
  periodBreaches,
  toCountedUnits,
  transactionBreaches,
} from './limits.ts';
import type { LimitCounters } from './ports.ts';

/**
 * Counting transfers against the limits of the tenant's payment controls (docs/approvals.md):
 * reserved when the transfer arrives, given back when it ends Rejected or Cancelled, kept when it
 * settles. Every counter write is idempotent per transfer (LimitCounters), and the transfer's own
 * record says, by one conditional write, what was decided: a repeat after a crash finishes the
 * job without counting twice.
 */
export interface LimitDependencies {
  store: LifecycleStore;
  counters: LimitCounters;
  clock: Clock;
  workflow?: WorkflowStarter;
  /** Publishes the change to Pending of a transfer the count holds for approval (no workflow runs). */
  announcer?: PendingAnnouncer;
}

const keysOf = (record: CreditTransferRecord, counters: LimitHold['counters']): LimitCounterKey[] =>
  counters.map(({ period, start }) => ({
    tenant: record.tenant,
    debtorAccountId: record.transfer.debtorAccountId,
    currency: record.transfer.currency as string,
    period,
    start,
  }));

const amountOf = (record: CreditTransferRecord): bigint => toCountedUnits(record.transfer.amount);

/** Tries the counter a few times: a refusal may meet room that a release made meanwhile. */
const RESERVE_TRIES = 3;

/** The limits of the counter's period the transfer breaks; none when it is counted. */
const reserveWithin = async (
  counters: LimitCounters,
  key: LimitCounterKey,
  record: CreditTransferRecord,
  limits: readonly AppliedLimit[],
): Promise<AppliedLimit[]> => {
  const amount = amountOf(record);
  const bound = counterBound(limits, key.period, amount);
  for (let attempt = 0; attempt < RESERVE_TRIES; attempt++) {
    const answer = await counters.reserve(key, record.paymentId, amount, bound);
    if (answer.counted) return [];
    const breached = periodBreaches(limits, key.period, amount, answer.usage);
    if (breached.length > 0) return breached;
  }
  // Still refused with room each time it looked: counted as the breach it was refused for.
  return limits.filter((limit) => limit.period === key.period);
};

const PERIOD_NAMES: Record<AppliedLimit['period'], string> = {
  transaction: 'per transfer',
  day: 'per day',
  month: 'per month',
};

/** How an approval held by a limit names it: `limit EUR 50000.00 per day` (or `100 transfers per day`). */
const limitRuleName = (limits: readonly AppliedLimit[], currency: string | undefined): string => {
  const [first] = limits as [AppliedLimit];
  const bound =
    first.maxAmount !== undefined
      ? `${first.currency ?? currency} ${first.maxAmount}`
      : `${first.maxCount} transfers`;
  return `limit ${bound} ${PERIOD_NAMES[first.period]}${first.debtorAccountId ? ` for ${first.debtorAccountId}` : ''}`;
};

const approvalForBreach = (
  record: CreditTransferRecord,
  breached: readonly AppliedLimit[],
  currency: string | undefined,
  expirySeconds: number,
  now: Date,
): PendingApproval => ({
  rule: limitRuleName(breached, currency),
  initiatingClientId: record.clientId,
  approvalsRequired: 1,
  approvals: [],
  expiresAt: secondsAfter(now, expirySeconds).toISOString(),
});

/**
 * Counts a transfer whose limits are being reserved (state `reserving`): each counter of its hold
 * by a conditional write, then the decision on the record. Within every limit it is `held`, and
 * a Received one starts its lifecycle; a breach gives back what it counted, then rejects it (AM14)
 * or holds it Pending for approval, as the breached limits say. Called by the initiation that
 * stored it, and by the reconciler for one that initiation left half done. The record afterwards.
 */
export const reserveLimits = async (
  deps: LimitDependencies,
  record: CreditTransferRecord,
): Promise<CreditTransferRecord> => {
  const hold = record.limits;
  if (hold?.state !== 'reserving') return record;
  const { tenant, paymentId } = record;
  const { currency } = record.transfer;
  // Without a currency it cannot be counted against a limit in one: taken as past every limit
  // that covers its account.
  let breached =
    currency === undefined ? [...hold.limits] : transactionBreaches(hold.limits, amountOf(record));
  // The day and the month at once: each its own conditional write.
  const keys = breached.length === 0 ? keysOf(record, hold.counters) : [];
  const outcomes = await Promise.all(
    keys.map((key) => reserveWithin(deps.counters, key, record, hold.limits)),
  );
  const counted = keys.filter((_, index) => outcomes[index]?.length === 0);
  breached = [...breached, ...outcomes.flat()];
  const now = deps.clock.now();
  let decided: CreditTransferRecord | undefined;
  if (breached.length === 0) {
    decided = await deps.store.updateLimits(
      tenant,
      paymentId,
      'reserving',
      { ...hold, state: 'held' },
      record.approval ? new Date(record.approval.expiresAt) : undefined,
      record.status,
    );
  } else {
    await Promise.all(counted.map((key) => deps.counters.release(key, paymentId, amountOf(record))));
    const date = now.toISOString();
    if (breachOutcome(breached) === 'reject') {
      decided = await deps.store.transition(tenant, paymentId, {
        from: record.status,
        change: {
          status: 'Rejected',
          statusReason: STATUS_REASONS.amountExceedsAgreedLimit,
          date,
          actor: 'workflow',
        },
        limits: { from: 'reserving', to: { ...hold, state: 'refused' } },
        // The workflow publishes the change (a recovery execution, should this start be lost).
        nextCheckAt: secondsAfter(now, STALL_SECONDS),
      });
    } else if (record.status === 'Pending' && record.approval) {
      decided = await deps.store.updateLimits(
        tenant,
        paymentId,
        'reserving',
        { ...hold, state: 'onApproval' },
        new Date(record.approval.expiresAt),
        'Pending',
      );
    } else {
      const approval = approvalForBreach(record, breached, currency, hold.approvalExpirySeconds, now);
      decided = await deps.store.transition(tenant, paymentId, {
        from: 'Received',
        change: { status: 'Pending', date, actor: 'workflow' },
        approval,
        limits: { from: 'reserving', to: { ...hold, state: 'onApproval' } },
        nextCheckAt: new Date(approval.expiresAt),
      });
    }
  }
  if (decided === undefined) {
    // Cancelled meanwhile: what it counted goes back, and nothing counts it any more.
    let current = (await deps.store.get(tenant, paymentId)) ?? record;
    if (isFinal(current.status) && current.limits?.state === 'reserving') {
      await Promise.all(counted.map((key) => deps.counters.release(key, paymentId, amountOf(record))));
      current =
        (await deps.store.updateLimits(tenant, paymentId, 'reserving', { ...hold, state: 'released' })) ??
        current;
    }
    await Promise.all(counted.map((key) => deps.counters.acknowledge(key, paymentId)));
    return current;
  }
  await Promise.all(counted.map((key) => deps.counters.acknowledge(key, paymentId)));
  if (decided.status === 'Received')
    await startLifecycle(deps.workflow, { tenant, paymentId, trigger: 'initiation' });
  // Held for approval: no workflow while it waits, its change to Pending published for approvers.
  if (decided.status === 'Pending') await announcePending(deps.announcer, decided);
  if (decided.status === 'Rejected')
    await startLifecycle(deps.workflow, { tenant, paymentId, trigger: 'cancellation' });
  return decided;
};

const givesBack = (record: CreditTransferRecord): boolean =>
  record.status === 'Rejected' || record.status === 'Cancelled';

/**
 * The approval of a transfer held Pending by a limit's breach: it counts now, past the limit if
 * need be (another client approved it), in the periods of the decision that approved it, so a
 * repeat finds the same counters. Moves it to Received with its hold `held` in one conditional
 * write; undefined when the transfer moved otherwise meanwhile (what this counted is then given
 * back).
 */
export const countApproved = async (
  deps: Omit<LimitDependencies, 'workflow' | 'announcer'>,
  record: CreditTransferRecord,
  approvedAt: Date,
): Promise<CreditTransferRecord | undefined> => {
  const hold = record.limits as LimitHold;
  // A transfer without a currency counts nowhere (it cannot be counted in one).
  const counters = record.transfer.currency === undefined ? [] : countersFor(hold.limits, approvedAt);
  const keys = keysOf(record, counters);
  for (const key of keys) await deps.counters.reserve(key, record.paymentId, amountOf(record), 'unbounded');
  const now = deps.clock.now();
  const moved = await deps.store.transition(record.tenant, record.paymentId, {
    from: 'Pending',
    change: { status: 'Received', date: now.toISOString(), actor: 'workflow' },
    limits: { from: 'onApproval', to: { ...hold, state: 'held', counters } },
    nextCheckAt: secondsAfter(now, STALL_SECONDS),
  });
  if (moved === undefined) {
    // Ended meanwhile (cancelled, expired): nothing counts it, and one caller gives it back.
    // Moved on by another caller: it counts.
    const current = await deps.store.get(record.tenant, record.paymentId);
    if (current !== undefined && givesBack(current) && current.limits?.state === 'onApproval') {
      await giveBack(deps, current, counters).catch((error: unknown) => {
        if (!(error instanceof ReleaseInProgressError)) throw error;
      });
    }
  }
  // The marks stay (a manual approval past a limit is rare): a repeat on a record read before this
  // one moved it finds its counters marked and counts nothing again.
  return moved;
};

/** How long a claim to give back holds: longer than any function runs, so its holder is gone after it. */
export const RELEASE_LEASE_SECONDS = 120;

/** Another caller gives back what the transfer counted (or moved it meanwhile): try again later. */
export class ReleaseInProgressError extends Error {
  constructor(paymentId: string) {
    super(`The limits of ${paymentId} are being given back by another caller`);
    this.name = 'ReleaseInProgressError';
  }
}

/**
 * Gives back what a transfer that ended Rejected or Cancelled counted, exactly once: the record is
 * claimed first (`releasing`, by one conditional write), then the counters are released (each
 * idempotent while its mark stays), then the record notes `released`, and only then the marks go.
 * Of two callers one claims; the other throws, and retries. A claim whose holder died is taken
 * over after RELEASE_LEASE_SECONDS.
 */
const giveBack = async (
  deps: Omit<LimitDependencies, 'workflow'>,
  record: CreditTransferRecord,
  counters: LimitHold['counters'],
): Promise<void> => {
  const hold = record.limits as LimitHold;
  const now = deps.clock.now();
  const held = hold.releasingSince;
  if (
    hold.state === 'releasing' &&
    held !== undefined &&
    Date.parse(held) + RELEASE_LEASE_SECONDS * 1000 > now.getTime()
  )
    throw new ReleaseInProgressError(record.paymentId);
  const since = now.toISOString();
  const { releasingSince: _previous, ...rest } = hold;
  const claimed = await deps.store.updateLimits(
    record.tenant,
    record.paymentId,
    hold.state === 'releasing' && held !== undefined ? { state: 'releasing', since: held } : hold.state,
    { ...rest, counters, state: 'releasing', releasingSince: since },
  );
  if (claimed === undefined) throw new ReleaseInProgressError(record.paymentId);
  const keys = keysOf(record, counters);
  await Promise.all(keys.map((key) => deps.counters.release(key, record.paymentId, amountOf(record))));
  await deps.store.updateLimits(
    record.tenant,
    record.paymentId,
    { state: 'releasing', since },
    { ...rest, counters, state: 'released' },
  );
  await Promise.all(keys.map((key) => deps.counters.acknowledge(key, record.paymentId)));
};

/** Whether a final transfer still owes back what it counted against its limits. */
export const owesLimitRelease = (record: CreditTransferRecord): boolean =>
  givesBack(record) && (record.limits?.state === 'held' || record.limits?.state === 'releasing');

/**
 * Told of every final transfer before it leaves the recovery index: one that ended Rejected or
 * Cancelled gives back what it counted (one caller at a time; another throws and is retried); a
 * settled one stays counted.
 */
export const limitReleaseListener = (
  deps: Omit<LimitDependencies, 'workflow' | 'announcer'>,
): FinalTransferListener => ({
  async transferFinal(record) {
    if (!owesLimitRelease(record)) return;
    await giveBack(deps, record, (record.limits as LimitHold).counters);
  },
});
