import * as z from 'zod/mini';
import {
  type CreditTransferStatus,
  creditTransferRequestSchema,
  creditTransferStatusSchema,
} from './credit-transfer.ts';
import {
  ACTORS,
  isBeforeSettlement,
  isFinal,
  STALL_SECONDS,
  STATUS_REASONS,
  secondsAfter,
  statusEventId,
} from './lifecycle.ts';
import { type LifecycleSettings, pollBudgetSeconds, pollWaitSeconds } from './lifecycle-settings.ts';
import type {
  Clock,
  CreditTransferRecord,
  LifecycleStore,
  Rail,
  RailPayment,
  StatusChange,
  StatusChangedEvent,
  StatusEventPublisher,
} from './ports.ts';

export * from './lifecycle-settings.ts';

/**
 * The steps of the lifecycle workflow, one per Task state of the ASL file. Each step reads the
 * transfer, and either finds it already past its step (a re-run after a crash, or a second
 * execution): then it carries on without writing; or it makes its change with a conditional
 * update that names the status it leaves. A pending cancellation wins in every step until the
 * submission to clearing is claimed; afterwards only clearing's recall can cancel the payment.
 */

/** What flows from state to state: identifiers and routing only, never payment data. */
export const lifecycleStateSchema = z.object({
  tenant: z.string().check(z.minLength(1)),
  paymentId: z.string().check(z.minLength(1)),
  trigger: z.enum(['initiation', 'cancellation', 'recovery']),
  attempt: z.optional(z.int().check(z.gte(0))),
  status: z.optional(creditTransferStatusSchema),
  next: z.optional(z.enum(['continue', 'hold', 'poll', 'finish'])),
  holdUntil: z.optional(z.string()),
  waitSeconds: z.optional(z.int().check(z.gte(0))),
  pollAttempt: z.optional(z.int().check(z.gte(0))),
});
export type LifecycleState = z.infer<typeof lifecycleStateSchema>;
/** `continue` to the next step, `hold` until the value date, `poll` clearing again, `finish` the execution. */
export type LifecycleNext = NonNullable<LifecycleState['next']>;

export class CreditTransferMissingError extends Error {
  constructor(paymentId: string) {
    super(`No credit transfer ${paymentId} for the workflow to drive`);
    this.name = 'CreditTransferMissingError';
  }
}

export class ConcurrentUpdateError extends Error {
  constructor(paymentId: string) {
    super(`Credit transfer ${paymentId} kept changing under the step; the step is retried`);
    this.name = 'ConcurrentUpdateError';
  }
}

export interface StepDependencies {
  store: LifecycleStore;
  rail: Rail;
  clock: Clock;
  settings: LifecycleSettings;
}

const railPayment = (record: CreditTransferRecord): RailPayment => ({
  tenant: record.tenant,
  paymentId: record.paymentId,
  clientId: record.clientId,
  transfer: record.transfer,
});

/**
 * A step's output. The ASL routes `hold` to a Wait on `$.holdUntil` and `poll` to a Wait on
 * `$.waitSeconds` (a missing one fails the execution), so each carries its field.
 */
function output(
  state: LifecycleState,
  record: CreditTransferRecord,
  next: 'hold',
  extra: { holdUntil: string },
): LifecycleState;
function output(
  state: LifecycleState,
  record: CreditTransferRecord,
  next: 'poll',
  extra: { waitSeconds: number; pollAttempt: number },
): LifecycleState;
function output(
  state: LifecycleState,
  record: CreditTransferRecord,
  next: Exclude<LifecycleNext, 'hold' | 'poll'>,
  extra?: { pollAttempt?: number },
): LifecycleState;
function output(
  state: LifecycleState,
  record: CreditTransferRecord,
  next: LifecycleNext,
  extra: Partial<Pick<LifecycleState, 'holdUntil' | 'waitSeconds' | 'pollAttempt'>> = {},
): LifecycleState {
  return {
    tenant: state.tenant,
    paymentId: state.paymentId,
    trigger: state.trigger,
    ...(state.attempt !== undefined && { attempt: state.attempt }),
    status: record.status,
    next,
    ...extra,
  };
}

const change = (
  status: CreditTransferStatus,
  now: Date,
  actor: string,
  statusReason?: string,
): StatusChange => ({
  status,
  ...(statusReason !== undefined && { statusReason }),
  date: now.toISOString(),
  actor,
});

const load = async (store: LifecycleStore, state: LifecycleState): Promise<CreditTransferRecord> => {
  const record = await store.get(state.tenant, state.paymentId);
  if (record === undefined) throw new CreditTransferMissingError(state.paymentId);
  return record;
};

/** A step lost a race when its conditional update failed; it then looks at the transfer afresh. */
type StepResult = LifecycleState | 'raced';
const MAX_RACES = 5;

/**
 * The frame of every step: a final transfer finishes the execution; a pending cancellation
 * before submission ends the transfer Cancelled; otherwise `act` does the step's own work.
 */
const runStep = async (
  deps: StepDependencies,
  state: LifecycleState,
  act: (record: CreditTransferRecord, now: Date) => Promise<StepResult>,
): Promise<LifecycleState> => {
  for (let race = 0; race < MAX_RACES; race++) {
    const record = await load(deps.store, state);
    const now = deps.clock.now();
    if (isFinal(record.status)) return output(state, record, 'finish');
    if (record.cancellation !== undefined && isBeforeSettlement(record)) {
      const cancelled = await deps.store.transition(state.tenant, state.paymentId, {
        from: record.status,
        change: change('Cancelled', now, record.cancellation.clientId, STATUS_REASONS.requestedByCustomer),
        // Once submission is claimed clearing may have the payment: only a recall cancels it then.
        submission: 'unclaimed',
        nextCheckAt: secondsAfter(now, STALL_SECONDS),
      });
      if (cancelled) return output(state, cancelled, 'finish');
      continue;
    }
    const result = await act(record, now);
    if (result !== 'raced') return result;
  }
  throw new ConcurrentUpdateError(state.paymentId);
};

/** A rejection reason when the stored transfer cannot be processed at all. */
const technicalRejection = (record: CreditTransferRecord): string | undefined => {
  if (!creditTransferRequestSchema.safeParse(record.transfer).success)
    return STATUS_REASONS.invalidFileFormat;
  if (!/[1-9]/.test(record.transfer.amount) || record.transfer.amount.startsWith('-'))
    return STATUS_REASONS.zeroAmount;
  return undefined;
};

export const validateTechnically = (deps: StepDependencies, state: LifecycleState): Promise<LifecycleState> =>
  runStep(deps, state, async (record, now) => {
    if (record.status !== 'Received') return output(state, record, 'continue');
    const reason = technicalRejection(record);
    const updated = await deps.store.transition(state.tenant, state.paymentId, {
      from: 'Received',
      change:
        reason === undefined
          ? change('AcceptedTechnicalValidation', now, ACTORS.workflow)
          : change('Rejected', now, ACTORS.workflow, reason),
      unlessCancellationRequested: true,
      nextCheckAt: secondsAfter(now, STALL_SECONDS),
    });
    if (!updated) return 'raced';
    return output(state, updated, reason === undefined ? 'continue' : 'finish');
  });

type Hold =
  | { kind: 'none' }
  /** Wait in this execution until `until` (RFC 3339, for the Wait state's TimestampPath). */
  | { kind: 'wait'; until: string }
  /** Too far ahead for one execution: the reconciler starts one at `resumeAt`. */
  | { kind: 'later'; resumeAt: Date };

/** Whether the transfer waits for its value date (from its start, UTC) before submission. */
const holdOf = (record: CreditTransferRecord, now: Date, settings: LifecycleSettings): Hold => {
  const { valueDate } = record.transfer;
  if (valueDate === undefined) return { kind: 'none' };
  const start = Date.parse(`${valueDate}T00:00:00Z`);
  if (!(start > now.getTime())) return { kind: 'none' };
  if (start - now.getTime() > settings.maxHoldSeconds * 1000) {
    return { kind: 'later', resumeAt: new Date(start - settings.maxHoldSeconds * 1000) };
  }
  return { kind: 'wait', until: new Date(start).toISOString().replace(/\.\d{3}Z$/, 'Z') };
};

/** When the reconciler should look next, given the hold: after it ends, or soon. */
const checkAfterHold = (hold: Hold, now: Date): Date =>
  hold.kind === 'wait'
    ? secondsAfter(new Date(hold.until), STALL_SECONDS)
    : hold.kind === 'later'
      ? hold.resumeAt
      : secondsAfter(now, STALL_SECONDS);

const holdOutput = (state: LifecycleState, record: CreditTransferRecord, hold: Hold): LifecycleState =>
  hold.kind === 'wait'
    ? output(state, record, 'hold', { holdUntil: hold.until })
    : output(state, record, hold.kind === 'later' ? 'finish' : 'continue');

export const checkCustomerProfile = (
  deps: StepDependencies,
  state: LifecycleState,
): Promise<LifecycleState> =>
  runStep(deps, state, async (record, now) => {
    if (record.status === 'AcceptedCustomerProfile') {
      // Already checked (a re-run, or recovery during a hold): hold again while the date is ahead.
      const hold = holdOf(record, now, deps.settings);
      if (hold.kind !== 'none')
        await deps.store.scheduleCheck(state.tenant, state.paymentId, checkAfterHold(hold, now));
      return holdOutput(state, record, hold);
    }
    if (record.status !== 'AcceptedTechnicalValidation') return output(state, record, 'continue');

    const check = await deps.rail.checkCustomerProfile(railPayment(record));
    if (!check.accepted) {
      const rejected = await deps.store.transition(state.tenant, state.paymentId, {
        from: 'AcceptedTechnicalValidation',
        change: change('Rejected', now, ACTORS.rail, check.reason),
        unlessCancellationRequested: true,
        nextCheckAt: secondsAfter(now, STALL_SECONDS),
      });
      return rejected ? output(state, rejected, 'finish') : 'raced';
    }
    const hold = holdOf(record, now, deps.settings);
    const accepted = await deps.store.transition(state.tenant, state.paymentId, {
      from: 'AcceptedTechnicalValidation',
      change: change('AcceptedCustomerProfile', now, ACTORS.rail),
      unlessCancellationRequested: true,
      nextCheckAt: checkAfterHold(hold, now),
    });
    return accepted ? holdOutput(state, accepted, hold) : 'raced';
  });

export const submitToClearing = (deps: StepDependencies, state: LifecycleState): Promise<LifecycleState> =>
  runStep(deps, state, async (record, now) => {
    // Already submitted: poll at once (this is a re-run, a cancellation or a recovery).
    if (record.status !== 'AcceptedCustomerProfile')
      return output(state, record, 'poll', { waitSeconds: 0, pollAttempt: 0 });
    // The claim and a cancellation request are conditional writes on the same item: either the
    // cancellation came first and wins here, or the payment goes to clearing and a later
    // cancellation needs a recall. A claim already made (a re-run, or a second execution) is
    // submitted again: submission is idempotent by paymentId.
    if (record.submittedAt === undefined) {
      const claimed = await deps.store.claimSubmission(state.tenant, state.paymentId, now);
      if (!claimed) return 'raced';
    }
    // Clearing first: a transfer is never marked in settlement that clearing does not have.
    await deps.rail.submit(railPayment(record));
    const submitted = await deps.store.transition(state.tenant, state.paymentId, {
      from: 'AcceptedCustomerProfile',
      change: change('AcceptedSettlementInProcess', now, ACTORS.rail),
      submission: 'claimed',
      // Submitted means a cancellation can only win by a recall now, which polling asks for.
      nextCheckAt: secondsAfter(now, pollBudgetSeconds(deps.settings) + STALL_SECONDS),
    });
    if (!submitted) return 'raced';
    return output(state, submitted, 'poll', {
      waitSeconds: pollWaitSeconds(deps.settings, 0),
      pollAttempt: 0,
    });
  });

export const pollClearing = (deps: StepDependencies, state: LifecycleState): Promise<LifecycleState> =>
  runStep(deps, state, async (record, now) => {
    // Nothing to poll: a transfer before settlement here is the reconciler's (it was handed over).
    if (record.status !== 'AcceptedSettlementInProcess') return output(state, record, 'finish');
    const payment = railPayment(record);
    const recalled = record.cancellation !== undefined && (await deps.rail.recall(payment)) === 'recalled';
    const clearing = recalled ? ({ state: 'recalled' } as const) : await deps.rail.clearingStatus(payment);

    if (clearing.state === 'pending') {
      const attempt = (state.pollAttempt ?? 0) + 1;
      if (attempt < deps.settings.pollMaxAttempts) {
        return output(state, record, 'poll', {
          waitSeconds: pollWaitSeconds(deps.settings, attempt),
          pollAttempt: attempt,
        });
      }
      // Bounded polls per execution: the reconciler asks clearing from here on, at no transition cost.
      await deps.store.scheduleCheck(
        state.tenant,
        state.paymentId,
        secondsAfter(now, pollWaitSeconds(deps.settings, attempt)),
      );
      return output(state, record, 'finish', { pollAttempt: attempt });
    }

    const outcome =
      clearing.state === 'settled'
        ? change('AcceptedSettlementCompleted', now, ACTORS.rail)
        : clearing.state === 'rejected'
          ? change('Rejected', now, ACTORS.rail, clearing.reason)
          : change(
              'Cancelled',
              now,
              record.cancellation?.clientId ?? ACTORS.rail,
              STATUS_REASONS.requestedByCustomer,
            );
    const updated = await deps.store.transition(state.tenant, state.paymentId, {
      from: 'AcceptedSettlementInProcess',
      change: outcome,
      nextCheckAt: secondsAfter(now, STALL_SECONDS),
    });
    return updated ? output(state, updated, 'finish') : 'raced';
  });

export interface PublishDependencies {
  store: LifecycleStore;
  publisher: StatusEventPublisher;
}

export const toStatusChangedEvent = (
  record: CreditTransferRecord,
  sequence: number,
  entry: StatusChange,
): StatusChangedEvent => ({
  eventId: statusEventId(record.tenant, record.paymentId, sequence),
  tenant: record.tenant,
  paymentId: record.paymentId,
  sequence,
  status: entry.status,
  ...(entry.statusReason !== undefined && { statusReason: entry.statusReason }),
  date: entry.date,
  actor: entry.actor,
  ...(sequence > 0 && { previousStatus: record.history[sequence - 1]?.status }),
});

/**
 * Publishes every history entry not yet published, then notes how far it got. A crash in between
 * publishes some again on the retry (consumers dedupe by eventId); none is lost, because a
 * transfer leaves the recovery index only once final and fully published.
 */
export const publishStatusEvents = async (
  deps: PublishDependencies,
  state: Pick<LifecycleState, 'tenant' | 'paymentId'>,
): Promise<{ published: number }> => {
  const record = await deps.store.get(state.tenant, state.paymentId);
  if (record === undefined) throw new CreditTransferMissingError(state.paymentId);
  const from = record.publishedCount ?? 0;
  const pending = record.history.slice(from);
  if (pending.length > 0) {
    await deps.publisher.publish(
      pending.map((entry, index) => toStatusChangedEvent(record, from + index, entry)),
    );
  }
  const final = isFinal(record.status);
  if (pending.length > 0 || (final && record.nextCheckAt !== undefined)) {
    await deps.store.markPublished(state.tenant, state.paymentId, record.history.length, final);
  }
  return { published: pending.length };
};
