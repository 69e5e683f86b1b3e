import { randomUUID } from 'node:crypto';
import * as z from 'zod/mini';
import type { Clock } from '../commons/ports.ts';
import { statusReasonCodeOf } from '../iso20022/status-codes.ts';
import { owesLimitRelease } from '../payment-controls/count-limits.ts';
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
  toStatusChangedEvent,
} from './lifecycle.ts';
import {
  type LifecycleSettings,
  pollBudgetSeconds,
  pollRouteOf,
  pollWaitSeconds,
} from './lifecycle-settings.ts';
import type {
  CreditTransferRecord,
  FinalTransferListener,
  LifecycleStore,
  Rail,
  RailPayment,
  RailRefusal,
  StatusChange,
  StatusEventPublisher,
  SubmissionClaim,
} from './ports.ts';

export { toStatusChangedEvent } from './lifecycle.ts';
export * from './lifecycle-settings.ts';

/**
 * The steps of the lifecycle workflow, one per Task state of the ASL file. Each step reads the
 * transfer once (or takes it from a conditional write that needs no read first), and either finds
 * it already past its work (a re-run after a crash, or a second execution): then it carries on
 * without writing; or it makes each change with a conditional update that names the status it
 * leaves and answers the transfer as it now is, which the next change starts from. A pending
 * cancellation wins in every step until the submission to clearing is claimed; afterwards only
 * clearing's recall can cancel the payment.
 */

/** A status change as the state carries it to the publish step (status metadata, no payment data). */
const statusEventSchema = z.object({
  eventId: z.string(),
  tenant: z.string(),
  paymentId: z.string(),
  sequence: z.int().check(z.gte(0)),
  status: creditTransferStatusSchema,
  previousStatus: z.optional(creditTransferStatusSchema),
  statusReason: z.optional(z.string()),
  statusReasonCode: z.optional(z.string()),
  date: z.string(),
  actor: z.string(),
});

/**
 * What flows from state to state: identifiers, routing and the status changes to publish, never
 * payment data. `published` counts the history entries published so far (a prefix) as far as this
 * execution knows, and `unpublished` are the ones after it, which the next publish step sends.
 */
export const lifecycleStateSchema = z.object({
  tenant: z.string().check(z.minLength(1)),
  paymentId: z.string().check(z.minLength(1)),
  trigger: z.enum(['initiation', 'cancellation', 'recovery']),
  attempt: z.optional(z.int().check(z.gte(0))),
  status: z.optional(creditTransferStatusSchema),
  next: z.optional(z.enum(['continue', 'hold', 'poll', 'wait', 'finish'])),
  holdUntil: z.optional(z.string()),
  waitSeconds: z.optional(z.int().check(z.gte(0))),
  pollAttempt: z.optional(z.int().check(z.gte(0))),
  published: z.optional(z.int().check(z.gte(0))),
  unpublished: z.optional(z.array(statusEventSchema)),
  /** The transfer belongs to a batch: its final status is counted toward the batch's outcome. */
  inBatch: z.optional(z.boolean()),
  /** The transfer ended Rejected or Cancelled owing back what it counted against limits. */
  limited: z.optional(z.boolean()),
});
export type LifecycleState = z.infer<typeof lifecycleStateSchema>;
/**
 * `continue` to the next step, `hold` until the value date, `poll` clearing again after a wait the
 * fast path takes, `wait` longer before the next poll (the Standard state machine's), `finish`.
 */
export type LifecycleNext = NonNullable<LifecycleState['next']>;

export class CreditTransferMissingError extends Error {
  constructor(paymentId: string) {
    super(`No credit transfer ${paymentId} for the workflow to drive`);
    this.name = 'CreditTransferMissingError';
  }
}

/** Clearing says it has no submission of a payment it was given: an operator must look (never submitted again). */
export class ClearingLostPaymentError extends Error {
  constructor(paymentId: string) {
    super(`Clearing has no submission of ${paymentId}, which it accepted`);
    this.name = 'ClearingLostPaymentError';
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

/** How many history entries are published: what the record notes, or more if this execution published them since. */
const publishedOf = (state: LifecycleState, record: CreditTransferRecord): number =>
  Math.min(record.history.length, Math.max(state.published ?? 0, record.publishedCount ?? 0));

/** The count to note in the next status write, when this execution knows of more than the record notes. */
const publishedToNote = (state: LifecycleState, record: CreditTransferRecord): number | undefined => {
  const published = publishedOf(state, record);
  return published > (record.publishedCount ?? 0) ? published : undefined;
};

/**
 * The recovery check a status change asks for: `wanted`, unless the transfer's check is no more
 * than half the stall time before it already (and the transfer is not parked): then the check
 * stays, and the status write moves no recovery index entry. A check left later than wanted is at
 * most the poll budget and the stall time after the write that set it (a submission, or a
 * reconciler's claim), or just after a hold's end, so a transfer stuck after this change is still
 * found, a few minutes later at most; one left a little earlier is found a little sooner.
 */
const checkFor = (record: CreditTransferRecord, wanted: Date): Date | undefined =>
  record.parked === undefined &&
  record.nextCheckAt !== undefined &&
  Date.parse(record.nextCheckAt) >= wanted.getTime() - (STALL_SECONDS * 1000) / 2
    ? undefined
    : wanted;

/**
 * A step's output. The ASL routes `hold` to a Wait on `$.holdUntil` and `poll` or `wait` to a Wait
 * on `$.waitSeconds` (a missing one fails the execution), so each carries its field. It carries the
 * transfer's changes not yet published, from the record the step last read or wrote.
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
  next: 'poll' | 'wait',
  extra: { waitSeconds: number; pollAttempt: number },
): LifecycleState;
function output(
  state: LifecycleState,
  record: CreditTransferRecord,
  next: Exclude<LifecycleNext, 'hold' | 'poll' | 'wait'>,
  extra?: { pollAttempt?: number },
): LifecycleState;
function output(
  state: LifecycleState,
  record: CreditTransferRecord,
  next: LifecycleNext,
  extra: Partial<Pick<LifecycleState, 'holdUntil' | 'waitSeconds' | 'pollAttempt'>> = {},
): LifecycleState {
  const published = publishedOf(state, record);
  return {
    tenant: state.tenant,
    paymentId: state.paymentId,
    trigger: state.trigger,
    ...(state.attempt !== undefined && { attempt: state.attempt }),
    status: record.status,
    next,
    ...extra,
    ...(record.batch !== undefined && { inBatch: true }),
    // Only a transfer that gives back: a settled one keeps what it counted, and needs no read.
    ...(owesLimitRelease(record) && { limited: true }),
    published,
    unpublished: record.history
      .slice(published)
      .map((entry, index) => toStatusChangedEvent(record, published + index, entry)),
  };
}

/** A status change; a reason is a name the service gives or the rail's refusal, with its ISO code. */
const change = (
  status: CreditTransferStatus,
  now: Date,
  actor: string,
  reason?: string | RailRefusal,
): StatusChange => {
  const refusal = typeof reason === 'string' ? { reason } : reason;
  return {
    status,
    ...(refusal !== undefined && {
      statusReason: refusal.reason,
      statusReasonCode: statusReasonCodeOf(refusal.reason, refusal.reasonCode),
    }),
    date: now.toISOString(),
    actor,
  };
};

const load = async (store: LifecycleStore, state: LifecycleState): Promise<CreditTransferRecord> => {
  const record = await store.get(state.tenant, state.paymentId);
  if (record === undefined) throw new CreditTransferMissingError(state.paymentId);
  return record;
};

/**
 * What a step's action answers: the step's output; `raced` when a conditional update failed (the
 * step then reads the transfer afresh); or `{ moved }`, the transfer as its write left it, which
 * the step goes on from without reading it again.
 */
type StepResult = LifecycleState | 'raced' | { moved: CreditTransferRecord };
const MAX_RACES = 5;
/** More changes than any one step makes: a step that keeps moving the transfer is a defect. */
const MAX_MOVES = 8;

/**
 * The frame of every step: a final transfer finishes the execution; a pending cancellation
 * before submission ends the transfer Cancelled; otherwise `act` does the step's own work.
 * `first`, when given, is a conditional write the step tries before any read: the transfer it
 * answers is the step's starting point, and only when it is refused is the transfer read.
 */
const runStep = async (
  deps: StepDependencies,
  state: LifecycleState,
  act: (record: CreditTransferRecord, now: Date) => Promise<StepResult>,
  first?: (now: Date) => Promise<CreditTransferRecord | undefined>,
): Promise<LifecycleState> => {
  let record = first ? await first(deps.clock.now()) : undefined;
  let races = 0;
  for (let moves = 0; moves < MAX_MOVES; moves++) {
    record ??= await load(deps.store, state);
    const now = deps.clock.now();
    if (isFinal(record.status)) return output(state, record, 'finish');
    let result: StepResult;
    if (record.cancellation !== undefined && isBeforeSettlement(record)) {
      const cancelled = await deps.store.transition(state.tenant, state.paymentId, {
        from: record.status,
        change: change('Cancelled', now, record.cancellation.clientId, STATUS_REASONS.requestedByCustomer),
        // Once submission is claimed clearing may have the payment: only a recall cancels it then.
        submission: 'unclaimed',
        nextCheckAt: checkFor(record, secondsAfter(now, STALL_SECONDS)),
        publishedCount: publishedToNote(state, record),
      });
      result = cancelled ? output(state, cancelled, 'finish') : 'raced';
    } else {
      result = await act(record, now);
    }
    if (result === 'raced') {
      if (++races >= MAX_RACES) break;
      record = undefined;
    } else if ('moved' in result) {
      record = result.moved;
    } else {
      return result;
    }
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

/**
 * Received -> AcceptedTechnicalValidation -> AcceptedCustomerProfile (or Rejected) in one write.
 * Technical validation needs nothing but the stored transfer, so it is decided here and recorded
 * with the rail's customer-profile check, each status with its own history entry; a transfer that
 * cannot be processed is Rejected at once, without asking the rail. Until the check answers, the
 * transfer reads Received; a crash before the write leaves it Received, and the step's re-run asks
 * the rail again (the check is a read).
 */
const validateAndCheck = async (
  deps: StepDependencies,
  state: LifecycleState,
  record: CreditTransferRecord,
  now: Date,
  claim: string,
): Promise<StepResult> => {
  const reason = technicalRejection(record);
  if (reason === undefined) {
    const validated = change('AcceptedTechnicalValidation', now, ACTORS.workflow);
    return checkCustomerProfile(deps, state, record, now, claim, validated);
  }
  const rejected = await deps.store.transition(state.tenant, state.paymentId, {
    from: 'Received',
    change: change('Rejected', now, ACTORS.workflow, reason),
    unlessCancellationRequested: true,
    nextCheckAt: checkFor(record, secondsAfter(now, STALL_SECONDS)),
    publishedCount: publishedToNote(state, record),
  });
  return rejected ? output(state, rejected, 'finish') : 'raced';
};

/**
 * AcceptedTechnicalValidation -> AcceptedCustomerProfile after the rail's checks, or Rejected; from
 * Received when `validated` (the technical validation just decided) is given, which the same write
 * records first. The outcome is dated when the rail answered. Without a value date ahead the same
 * write claims the submission: the transfer goes to clearing right away, and a cancellation from
 * then on needs clearing's recall.
 */
const checkCustomerProfile = async (
  deps: StepDependencies,
  state: LifecycleState,
  record: CreditTransferRecord,
  now: Date,
  claim: string,
  validated?: StatusChange,
): Promise<StepResult> => {
  const check = await deps.rail.checkCustomerProfile(railPayment(record));
  const checkedAt = deps.clock.now();
  const from: CreditTransferStatus = validated === undefined ? 'AcceptedTechnicalValidation' : 'Received';
  const through = validated === undefined ? [] : [validated];
  if (!check.accepted) {
    const rejected = await deps.store.transition(state.tenant, state.paymentId, {
      from,
      through,
      change: change('Rejected', checkedAt, ACTORS.rail, check),
      unlessCancellationRequested: true,
      nextCheckAt: checkFor(record, secondsAfter(now, STALL_SECONDS)),
      publishedCount: publishedToNote(state, record),
    });
    return rejected ? output(state, rejected, 'finish') : 'raced';
  }
  const hold = holdOf(record, now, deps.settings);
  const accepted = await deps.store.transition(state.tenant, state.paymentId, {
    from,
    through,
    change: change('AcceptedCustomerProfile', checkedAt, ACTORS.rail),
    unlessCancellationRequested: true,
    nextCheckAt: checkFor(record, checkAfterHold(hold, now)),
    publishedCount: publishedToNote(state, record),
    ...(hold.kind === 'none' && { claimSubmission: { at: now, id: claim } }),
  });
  if (!accepted) return 'raced';
  return hold.kind === 'none' ? { moved: accepted } : holdOutput(state, accepted, hold);
};

/**
 * The transfer as clearing has it now: AcceptedSettlementInProcess, then the polls; at once when
 * clearing was found to have it already (its outcome may be known).
 */
const recordSubmitted = async (
  deps: StepDependencies,
  state: LifecycleState,
  record: CreditTransferRecord,
  now: Date,
  foundInClearing: boolean,
): Promise<StepResult> => {
  const submitted = await deps.store.transition(state.tenant, state.paymentId, {
    from: 'AcceptedCustomerProfile',
    change: change('AcceptedSettlementInProcess', now, ACTORS.rail),
    submission: 'claimed',
    // Submitted means a cancellation can only win by a recall now, which polling asks for.
    nextCheckAt: checkFor(record, secondsAfter(now, pollBudgetSeconds(deps.settings) + STALL_SECONDS)),
    publishedCount: publishedToNote(state, record),
  });
  if (!submitted) return 'raced';
  if (foundInClearing) return pollAtOnce(state, submitted);
  return output(state, submitted, pollRouteOf(deps.settings, 0), {
    waitSeconds: pollWaitSeconds(deps.settings, 0),
    pollAttempt: 0,
  });
};

/**
 * Someone else's claim: a second execution of the transfer, a retry, or a holder that crashed.
 * Clearing is asked, never the submission repeated while the holder may still be submitting:
 * a payment clearing has moves on to polling at once; one it lacks waits for the claim's lease
 * to end (the reconciler looks again then), and is submitted again only after that, under a
 * claim of this invocation's own.
 */
const resolveOthersClaim = async (
  deps: StepDependencies,
  state: LifecycleState,
  record: CreditTransferRecord,
  now: Date,
  claim: string,
): Promise<StepResult> => {
  const clearing = await deps.rail.clearingStatus(railPayment(record));
  if (clearing.state !== 'unknown') return recordSubmitted(deps, state, record, now, true);
  const claimedAt = record.submittedAt as string;
  const leaseEnds = secondsAfter(new Date(claimedAt), deps.settings.submissionLeaseSeconds);
  if (now < leaseEnds) {
    await deps.store.scheduleCheck(state.tenant, state.paymentId, secondsAfter(leaseEnds, 1));
    return output(state, record, 'finish');
  }
  const retaken = await deps.store.retakeSubmission(state.tenant, state.paymentId, claimedAt, {
    at: now,
    id: claim,
  });
  return retaken ? { moved: retaken } : 'raced';
};

/**
 * AcceptedCustomerProfile -> AcceptedSettlementInProcess once clearing has the payment. The claim
 * and a cancellation request are conditional writes on the same item: either the cancellation came
 * first and wins, or the payment goes to clearing and a later cancellation needs a recall. Only
 * the invocation whose claim the transfer holds calls the rail's submit: a payment is submitted
 * once, whatever runs twice.
 */
const submit = async (
  deps: StepDependencies,
  state: LifecycleState,
  record: CreditTransferRecord,
  now: Date,
  claim: SubmissionClaim['id'],
): Promise<StepResult> => {
  let claimed = record;
  if (record.submittedAt === undefined) {
    const made = await deps.store.claimSubmission(state.tenant, state.paymentId, { at: now, id: claim });
    if (!made) return 'raced';
    claimed = made;
  }
  if (claimed.submissionClaim !== claim) return resolveOthersClaim(deps, state, claimed, now, claim);
  // Clearing first: a transfer is never marked in settlement that clearing does not have.
  await deps.rail.submit(railPayment(claimed));
  return recordSubmitted(deps, state, claimed, now, false);
};

/** Already submitted: poll at once (a re-run, a cancellation or a recovery). */
const pollAtOnce = (state: LifecycleState, record: CreditTransferRecord): LifecycleState =>
  output(state, record, 'poll', { waitSeconds: 0, pollAttempt: 0 });

/**
 * The first step of every execution: technical validation and the customer-profile checks (one
 * write) and, unless the value date is ahead, the submission to clearing, each write going on from
 * the transfer the previous one answered: one read for the whole way from Received to
 * AcceptedSettlementInProcess.
 */
export const validateCheckAndSubmit = (
  deps: StepDependencies,
  state: LifecycleState,
): Promise<LifecycleState> => {
  const claim = randomUUID();
  return runStep(deps, state, async (record, now) => {
    switch (record.status) {
      case 'Pending':
        // Waiting for approval, which no execution is started for (its change to Pending is
        // announced without one): should one run all the same, it does nothing but publish; the
        // approval starts the lifecycle.
        return output(state, record, 'finish');
      case 'Received':
        // Not counted against its limits yet: whoever counts it (the initiation, else the
        // reconciler) starts the lifecycle afterwards. Nothing goes to clearing before.
        if (record.limits?.state === 'reserving') return output(state, record, 'finish');
        return validateAndCheck(deps, state, record, now, claim);
      case 'AcceptedTechnicalValidation':
        // Validated by a write of its own (a transfer stored before both were one write).
        return checkCustomerProfile(deps, state, record, now, claim);
      case 'AcceptedCustomerProfile': {
        // Checked already (a re-run, or recovery during a hold): hold again while the date is ahead.
        const hold = holdOf(record, now, deps.settings);
        if (hold.kind !== 'none' && record.submittedAt === undefined) {
          await deps.store.scheduleCheck(state.tenant, state.paymentId, checkAfterHold(hold, now));
          return holdOutput(state, record, hold);
        }
        return submit(deps, state, record, now, claim);
      }
      default:
        return pollAtOnce(state, record);
    }
  });
};

/** After a value-date hold: the claim is the step's first write, and answers the transfer it submits. */
export const submitToClearing = (deps: StepDependencies, state: LifecycleState): Promise<LifecycleState> => {
  const claim = randomUUID();
  return runStep(
    deps,
    state,
    async (record, now) =>
      record.status === 'AcceptedCustomerProfile'
        ? submit(deps, state, record, now, claim)
        : pollAtOnce(state, record),
    (now) => deps.store.claimSubmission(state.tenant, state.paymentId, { at: now, id: claim }),
  );
};

export const pollClearing = (deps: StepDependencies, state: LifecycleState): Promise<LifecycleState> =>
  runStep(deps, state, async (record, now) => {
    // Nothing to poll: a transfer before settlement here is the reconciler's (it was handed over).
    if (record.status !== 'AcceptedSettlementInProcess') return output(state, record, 'finish');
    const payment = railPayment(record);
    const recalled = record.cancellation !== undefined && (await deps.rail.recall(payment)) === 'recalled';
    const clearing = recalled ? ({ state: 'recalled' } as const) : await deps.rail.clearingStatus(payment);
    // In settlement only once clearing had it: never submitted again, an operator looks (parking).
    if (clearing.state === 'unknown') throw new ClearingLostPaymentError(state.paymentId);

    if (clearing.state === 'pending') {
      const attempt = (state.pollAttempt ?? 0) + 1;
      if (attempt < deps.settings.pollMaxAttempts) {
        return output(state, record, pollRouteOf(deps.settings, attempt), {
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
          ? change('Rejected', now, ACTORS.rail, clearing)
          : change(
              'Cancelled',
              now,
              record.cancellation?.clientId ?? ACTORS.rail,
              STATUS_REASONS.requestedByCustomer,
            );
    const updated = await deps.store.transition(state.tenant, state.paymentId, {
      from: 'AcceptedSettlementInProcess',
      change: outcome,
      nextCheckAt: checkFor(record, secondsAfter(now, STALL_SECONDS)),
      publishedCount: publishedToNote(state, record),
    });
    return updated ? output(state, updated, 'finish') : 'raced';
  });

export interface PublishDependencies {
  store: LifecycleStore;
  publisher: StatusEventPublisher;
  /** Told of a final transfer before it leaves the recovery index (a batch counts it toward its outcome). */
  finalTransfers?: FinalTransferListener;
}

/** Tells each listener in turn. */
export const everyListener = (...listeners: FinalTransferListener[]): FinalTransferListener => ({
  async transferFinal(record) {
    for (const listener of listeners) await listener.transferFinal(record);
  },
});

/** Publishes from the stored history: every entry not yet noted as published, then notes how far it got. */
const publishFromHistory = async (
  deps: PublishDependencies,
  state: Pick<LifecycleState, 'tenant' | 'paymentId'>,
): Promise<number> => {
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
    if (final) await deps.finalTransfers?.transferFinal(record);
    await deps.store.markPublished(state.tenant, state.paymentId, record.history.length, final);
  }
  return record.history.length;
};

/**
 * Publishes the changes the previous step handed on (none read from the table), then notes how
 * far it got, unless the execution goes on to poll clearing (now or after a long wait): the poll's
 * status write notes it then. A crash in between publishes some again on the retry (consumers dedupe by eventId); none
 * is lost, because a transfer leaves the recovery index only once final and fully published. A
 * state without the changes (an execution started before they were handed on) publishes from the
 * stored history.
 */
export const publishStatusEvents = async (
  deps: PublishDependencies,
  state: LifecycleState,
): Promise<LifecycleState> => {
  const { unpublished, status } = state;
  if (unpublished === undefined || status === undefined) {
    const published = await publishFromHistory(deps, state);
    return { ...state, published, unpublished: [] };
  }
  if (unpublished.length > 0) await deps.publisher.publish(unpublished);
  const published = (state.published ?? 0) + unpublished.length;
  if (state.next !== 'poll' && state.next !== 'wait') {
    const final = isFinal(status);
    // Before the transfer leaves the recovery index: a crash in between leaves it to be counted again.
    if (final && (state.inBatch === true || state.limited === true) && deps.finalTransfers !== undefined) {
      const record = await deps.store.get(state.tenant, state.paymentId);
      if (record === undefined) throw new CreditTransferMissingError(state.paymentId);
      await deps.finalTransfers.transferFinal(record);
    }
    const noted = await deps.store.markPublished(state.tenant, state.paymentId, published, final);
    // A final transfer not as this execution saw it: the stored history says what is left.
    if (!noted && final)
      return { ...state, published: await publishFromHistory(deps, state), unpublished: [] };
  }
  return { ...state, published, unpublished: [] };
};
