import { randomUUID } from 'node:crypto';
import { fingerprint } from '../commons/canonical-json.ts';
import { IdempotencyKeyReusedError, type InvalidParam, InvalidRequestError } from '../commons/errors.ts';
import type { Clock } from '../commons/ports.ts';
import { parseOrThrow } from '../commons/validation.ts';
import { reserveLimits } from '../payment-controls/count-limits.ts';
import type { ControlsPolicy } from '../payment-controls/initiation-controls.ts';
import type { LimitCounters } from '../payment-controls/ports.ts';
import {
  type CreditTransfer,
  type CreditTransferRequest,
  creditTransferRequestSchema,
  type ServicerHeaders,
} from './credit-transfer.ts';
import { toCreditTransfer } from './credit-transfer-view.ts';
import { earliest, STALL_SECONDS, secondsAfter } from './lifecycle.ts';
import { moneyRuleViolations } from './money-rules.ts';
import { derivedPaymentId, randomPaymentId } from './payment-id.ts';
import type {
  CreditTransferRecord,
  CreditTransferStore,
  LifecycleStore,
  PendingAnnouncer,
  WorkflowStarter,
} from './ports.ts';
import { announcePending, startLifecycle } from './start-lifecycle.ts';

export interface InitiationDependencies {
  store: CreditTransferStore;
  clock: Clock;
  /** Starts the lifecycle after the write; without one, the reconciler starts it once due. */
  workflow?: WorkflowStarter;
  /** Publishes the change to Pending of a transfer held for approval; without one, the reconciler does once due. */
  announcer?: PendingAnnouncer;
  /**
   * The tenant's payment controls: a transfer meeting an approval rule waits in Pending, no
   * workflow started; one covered by limits is counted against them first.
   */
  controls?: ControlsPolicy;
  /** The limit counters and the store's conditional writes: needed once the controls have limits. */
  limits?: { store: LifecycleStore; counters: LimitCounters };
  /** How many days after today a valueDate may be at most; DEFAULT_MAX_VALUE_DATE_DAYS without it. */
  maxValueDateDays?: number;
}

/** A year: a payment is not instructed further ahead, and a date far beyond it is a typo. */
export const DEFAULT_MAX_VALUE_DATE_DAYS = 365;

const DAY_MS = 86_400_000;

export interface InitiationCommand {
  tenant: string;
  clientId: string;
  body: unknown;
  idempotencyKey?: string;
  servicer: ServicerHeaders;
}

export interface InitiationResult {
  creditTransfer: CreditTransfer;
  /** True when an earlier request with the same idempotency key and body made this payment. */
  replayed: boolean;
}

/** Whether nothing holds a stored transfer back from its lifecycle (approval, or its limits being counted). */
const startable = (record: CreditTransferRecord): boolean =>
  record.status === 'Received' && record.limits?.state !== 'reserving';

const isAboveZero = (amount: string): boolean => !amount.startsWith('-') && /[1-9]/.test(amount);

/** Rules of an initiation beyond the shape of the fields; some depend on the day it arrives. */
export const initiationRuleViolations = (
  transfer: CreditTransferRequest,
  now: Date,
  maxValueDateDays: number,
): InvalidParam[] => {
  const violations: InvalidParam[] = [];
  if (!isAboveZero(transfer.amount)) violations.push({ name: 'amount', reason: 'must be greater than zero' });
  // The check's amount follows the amount rules too: a check for -5 is never meant.
  const checkAmount = transfer.check?.amount;
  if (checkAmount !== undefined && !isAboveZero(checkAmount)) {
    violations.push({ name: 'check.amount', reason: 'must be greater than zero' });
  }
  violations.push(...moneyRuleViolations(transfer));
  const today = now.toISOString().slice(0, 10);
  const latest = new Date(Date.parse(today) + maxValueDateDays * DAY_MS).toISOString().slice(0, 10);
  if (transfer.valueDate !== undefined && transfer.valueDate < today) {
    violations.push({ name: 'valueDate', reason: `must be today (${today}, UTC) or later` });
  } else if (transfer.valueDate !== undefined && transfer.valueDate > latest) {
    violations.push({
      name: 'valueDate',
      reason: `must be at most ${maxValueDateDays} days ahead (${latest}, UTC, or earlier)`,
    });
  }
  return violations;
};

export const initiateCreditTransfer = async (
  {
    store,
    clock,
    workflow,
    announcer,
    controls,
    limits: limitCounting,
    maxValueDateDays = DEFAULT_MAX_VALUE_DATE_DAYS,
  }: InitiationDependencies,
  command: InitiationCommand,
): Promise<InitiationResult> => {
  const { tenant, clientId, idempotencyKey, servicer } = command;
  const transfer = parseOrThrow(
    creditTransferRequestSchema,
    command.body,
    'The credit transfer is not valid',
  );
  const requestHash = fingerprint({ transfer: command.body, servicer });
  const paymentId =
    idempotencyKey === undefined ? randomPaymentId() : derivedPaymentId(tenant, 'initiate', idempotencyKey);

  /** The earlier initiation under this key, if any; `known` when the record was read already. */
  const replayOf = async (known?: {
    record: CreditTransferRecord | undefined;
  }): Promise<InitiationResult | undefined> => {
    if (idempotencyKey === undefined) return undefined;
    const existing = known ? known.record : await store.get(tenant, paymentId);
    if (existing === undefined) return undefined;
    if (existing.requestHash !== requestHash || existing.idempotencyKey !== idempotencyKey) {
      throw new IdempotencyKeyReusedError();
    }
    // Starts it if the first attempt failed to. Only before any step ran: the fast path (Express)
    // runs a repeated start again, and once a step ran an execution has it (or the reconciler will).
    if (startable(existing)) await startLifecycle(workflow, { tenant, paymentId, trigger: 'initiation' });
    return { creditTransfer: toCreditTransfer(existing), replayed: true };
  };

  const now = clock.now();
  const violations = initiationRuleViolations(transfer, now, maxValueDateDays);
  if (violations.length > 0) {
    // A retry of yesterday's accepted payment still replays, though its valueDate has passed.
    const replay = await replayOf();
    if (replay) return replay;
    throw new InvalidRequestError('The credit transfer is not valid', violations);
  }

  const date = now.toISOString();
  // The controls current now decide; a transfer held for approval starts no workflow until approved.
  const { approval, limits } =
    controls === undefined ? {} : await controls(tenant, { transfer, clientId }, now);
  const status = approval === undefined ? 'Received' : 'Pending';
  const record: CreditTransferRecord = {
    tenant,
    paymentId,
    clientId,
    createdAt: date,
    status,
    statusDate: date,
    requestHash,
    writeId: randomUUID(),
    ...(idempotencyKey !== undefined && { idempotencyKey }),
    servicer,
    // Stored exactly as sent: the schema accepted it whole, with no unknown field.
    transfer: command.body as CreditTransferRequest,
    history: [{ status, date, actor: clientId }],
    ...(approval !== undefined && { approval }),
    ...(limits !== undefined && { limits }),
    // Should the workflow not start, the reconciler finds the transfer due from then on (a pending
    // one, should its change to Pending not be published; the reconciler then looks again when
    // its approval expires).
    nextCheckAt: earliest(secondsAfter(now, STALL_SECONDS).toISOString(), approval?.expiresAt),
  };
  /**
   * Counts it against its limits, when any cover it (which starts it as the outcome says); else
   * starts it, or announces a pending one (no workflow runs while it waits).
   */
  const proceed = async (stored: CreditTransferRecord): Promise<CreditTransferRecord> => {
    if (stored.limits?.state === 'reserving') {
      if (limitCounting === undefined)
        throw new Error('Limits cover the transfer and no limit counters were given');
      return reserveLimits({ ...limitCounting, clock, workflow, announcer }, stored);
    }
    if (stored.status === 'Received')
      await startLifecycle(workflow, { tenant, paymentId, trigger: 'initiation' });
    if (stored.status === 'Pending') await announcePending(announcer, stored);
    return stored;
  };
  if (await store.create(record)) {
    return { creditTransfer: toCreditTransfer(await proceed(record)), replayed: false };
  }

  // Refused, yet perhaps by our own write: the SDK retries a write whose answer was lost.
  const existing = await store.get(tenant, paymentId);
  if (existing !== undefined && existing.writeId === record.writeId) {
    return { creditTransfer: toCreditTransfer(await proceed(existing)), replayed: false };
  }
  const replay = await replayOf({ record: existing });
  if (replay) return replay;
  throw new Error(`paymentId ${paymentId} is taken and no idempotent original was found`);
};
