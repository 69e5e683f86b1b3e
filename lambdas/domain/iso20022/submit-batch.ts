import { createHash } from 'node:crypto';
import * as z from 'zod/mini';
import { fingerprint } from '../commons/canonical-json.ts';
import { compareDecimals, isDecimal } from '../commons/decimal.ts';
import {
  BatchTooLargeError,
  IdempotencyKeyReusedError,
  type InvalidParam,
  InvalidRequestError,
  MessageIdReusedError,
} from '../commons/errors.ts';
import type { Clock } from '../commons/ports.ts';
import { identifierText } from '../commons/text.ts';
import { toInvalidParams } from '../commons/validation.ts';
import {
  type CreditTransferRequest,
  creditTransferRequestSchema,
  type ServicerHeaders,
} from '../credit-transfers/credit-transfer.ts';
import {
  DEFAULT_MAX_VALUE_DATE_DAYS,
  initiationRuleViolations,
} from '../credit-transfers/initiate-credit-transfer.ts';
import { earliest, STALL_SECONDS, secondsAfter } from '../credit-transfers/lifecycle.ts';
import { derivedPaymentId, randomPaymentId } from '../credit-transfers/payment-id.ts';
import type {
  CreditTransferRecord,
  CreditTransferStore,
  OriginalMessage,
} from '../credit-transfers/ports.ts';
import type { PendingApproval } from '../payment-controls/approval.ts';
import type { CurrentApprovalRules, LimitRules } from '../payment-controls/initiation-controls.ts';
import { limitHoldFor } from '../payment-controls/limits.ts';
import { type MessageGroup, type MessageTransaction, type Pain001Message, readPain001 } from './pain001.ts';
import { inPool } from './pool.ts';
import type {
  BatchApprovalHold,
  BatchLifecycleStarter,
  BatchMessageSummary,
  BatchPaymentGroup,
  BatchRecord,
  BatchStore,
  Pain001Reader,
} from './ports.ts';
import { sepaProfileViolations } from './sepa-profile.ts';
import { compactId } from './transfer-report.ts';
import {
  checkXmlBounds,
  MAX_XML_ATTRIBUTES,
  MAX_XML_DEPTH,
  MAX_XML_ELEMENTS,
  utf8XmlText,
} from './xml-input.ts';

/** At most this many transfers in one batch (413 above, naming the limit). */
export const MAX_BATCH_TRANSACTIONS = 2000;
/**
 * Seconds a largest batch's lifecycle starts take at most, paced (start-batch-lifecycles.ts):
 * within the batch start function's time (lib/concurrency.ts checks the two agree).
 */
export const BATCH_START_MAX_SECONDS = 240;
/** The slowest pace of a batch's starts, so a largest batch's fit BATCH_START_MAX_SECONDS: 9 a second. */
export const MIN_BATCH_STARTS_PER_SECOND = Math.ceil((MAX_BATCH_TRANSACTIONS - 1) / BATCH_START_MAX_SECONDS);
/** At most this many bytes in one batch request (413 above). */
export const MAX_BATCH_BYTES = 5 * 1024 * 1024;
/** A pain.001 payment group asked for up to this many days before today is executed at once; older, it is rejected. */
export const MAX_PAST_EXECUTION_DAYS = 30;
/** The reason a payment group whose ReqdExctnDt is too far past is rejected with (ISO ExternalStatusReason1Code). */
export const STALE_EXECUTION_DATE = { statusReasonCode: 'DT01', statusReason: 'InvalidDate' } as const;
/** The message name a report gives a JSON batch. */
export const JSON_BATCH_MESSAGE_NAME = 'CreditTransferBatchJSON';
/** Transfers written at once: enough to keep the table busy, few enough to stay under its rate. */
const CONCURRENCY = 16;

export interface BatchDependencies {
  store: CreditTransferStore;
  batches: BatchStore;
  reader: Pain001Reader;
  clock: Clock;
  /** Starts the batch's lifecycles after the answer; absent, none start (the reconciler's). */
  lifecycles?: BatchLifecycleStarter;
  /** The tenant's approval rules: a transfer meeting one is stored Pending and its lifecycle waits. */
  approvalRules?: CurrentApprovalRules;
  /** The tenant's limits: each transfer is stored to be counted against them before it starts. */
  limitRules?: (tenant: string) => Promise<LimitRules | undefined>;
  maxValueDateDays?: number;
}

export type BatchBody = { kind: 'json'; value: unknown } | { kind: 'xml'; text: string };

export interface BatchCommand {
  tenant: string;
  clientId: string;
  idempotencyKey?: string;
  servicer: ServicerHeaders;
  body: BatchBody;
}

export interface BatchAcceptance {
  batch: BatchRecord;
  /** Each transfer's paymentId, in message order. */
  paymentIds: string[];
  replayed: boolean;
}

const jsonBatchSchema = z.strictObject({
  creditTransfers: z.array(z.unknown()).check(z.minLength(1, 'must hold at least one credit transfer')),
});

/** The paymentId of the transfer at `index` of a batch: the same on every repeat of the request. */
export const batchPaymentId = (tenant: string, batchId: string, index: number): string =>
  derivedPaymentId(tenant, 'batch-transfer', `${batchId}\u0000${index}`);

export const batchPaymentIds = (batch: Pick<BatchRecord, 'tenant' | 'batchId' | 'count'>): string[] =>
  Array.from({ length: batch.count }, (_, index) => batchPaymentId(batch.tenant, batch.batchId, index));

/** A transfer to store, and how to name its fields in a refusal. */
interface Candidate {
  body: Record<string, unknown>;
  /** Said of the transfer beside its fields (a pain.002's `AddtlInf`), e.g. an execution date moved. */
  additionalInformation?: string;
  /** `invalidParams` name of a field of this transfer. */
  nameOf: (field: string) => string;
  /** Its payment group and ids in the message, which its reports name. */
  place: Omit<OriginalMessage, 'messageId' | 'messageName' | 'createdAt'>;
}

/** What the transfer's own pain.002 names: the batch's message, then the transfer's place in it. */
const originOf = (message: BatchMessageSummary, place: Candidate['place']): OriginalMessage => ({
  messageId: message.messageId,
  messageName: message.messageName,
  ...(message.createdAt !== undefined && { createdAt: message.createdAt }),
  paymentInformationId: message.messageId,
  ...place,
});

/** The XML path a field came from: its own source, else its nearest parent's, else the transaction's. */
const xmlNameOf =
  (transaction: MessageTransaction) =>
  (field: string): string => {
    for (let name = field; name !== ''; name = name.replace(/(\.[^.[]+|\[\d+\])$/, '')) {
      const source = transaction.sources[name];
      if (source !== undefined) return source;
      if (!/(\.[^.[]+|\[\d+\])$/.test(name)) break;
    }
    return transaction.path;
  };

const checkTransfers = (
  candidates: readonly Candidate[],
  now: Date,
  maxValueDateDays: number,
  earlier: readonly InvalidParam[] = [],
): { transfer: CreditTransferRequest; place: Candidate['place'] }[] => {
  const violations: InvalidParam[] = [...earlier];
  const transfers: { transfer: CreditTransferRequest; place: Candidate['place'] }[] = [];
  for (const candidate of candidates) {
    const parsed = creditTransferRequestSchema.safeParse(candidate.body, {
      error: (issue) => (issue.input === undefined ? 'is required' : undefined),
    });
    if (!parsed.success) {
      for (const fault of toInvalidParams(parsed.error.issues))
        violations.push({ name: candidate.nameOf(fault.name), reason: fault.reason });
      continue;
    }
    for (const fault of initiationRuleViolations(parsed.data, now, maxValueDateDays))
      violations.push({ name: candidate.nameOf(fault.name), reason: fault.reason });
    transfers.push({ transfer: candidate.body as CreditTransferRequest, place: candidate.place });
  }
  if (violations.length > 0)
    throw new InvalidRequestError('The batch is not valid: nothing was stored', violations.slice(0, 100));
  return transfers;
};

/** A decimal text as an integer of `scale` fractional digits, to add amounts exactly. */
const scaled = (amount: string, scale: number): bigint => {
  const [whole = '0', fraction = ''] = amount.split('.');
  return BigInt(whole + fraction.padEnd(scale, '0'));
};
const SCALE = 8;
const sumOf = (amounts: readonly string[]): bigint =>
  amounts.reduce((sum, amount) => sum + scaled(amount, SCALE), 0n);
const decimalOf = (value: bigint): string => {
  const digits = value.toString().padStart(SCALE + 1, '0');
  const fraction = digits.slice(-SCALE).replace(/0+$/, '');
  return `${digits.slice(0, -SCALE)}${fraction === '' ? '' : `.${fraction}`}`;
};

/** NbOfTxs and CtrlSum of the group header and of each PmtInf, against the transactions. */
export const groupRuleViolations = (message: Pain001Message): InvalidParam[] => {
  const violations: InvalidParam[] = [];
  const amountsOf = (transactions: readonly MessageTransaction[]) =>
    transactions.map((transaction) => String(transaction.transfer.amount ?? '0'));
  const check = (
    count: { value: string; path: string } | undefined,
    sum: { value: string; path: string } | undefined,
    transactions: readonly MessageTransaction[],
  ) => {
    // Compared as numbers: `01` is 1 (Max15NumericText, digits only), `10.000000000` is 10.
    if (
      count !== undefined &&
      !(/^\d+$/.test(count.value) && BigInt(count.value) === BigInt(transactions.length))
    )
      violations.push({
        name: count.path,
        reason: `must be ${transactions.length}, the number of CdtTrfTxInf it covers`,
      });
    const total = sumOf(amountsOf(transactions));
    // xs:decimal also allows a leading `+` and no integer digits (`.5`).
    const stated = sum?.value.replace(/^\+/, '').replace(/^\./, '0.');
    if (sum !== undefined && (stated === undefined || !isDecimal(stated)))
      violations.push({ name: sum.path, reason: 'must be a decimal number' });
    else if (sum !== undefined && compareDecimals(stated as string, decimalOf(total)) !== 0)
      violations.push({
        name: sum.path,
        reason: `must be ${decimalOf(total)}, the sum of the InstdAmt it covers`,
      });
  };
  const all = message.groups.flatMap((group) => group.transactions);
  check(message.numberOfTransactions, message.controlSum, all);
  for (const group of message.groups) check(group.numberOfTransactions, group.controlSum, group.transactions);
  for (const transaction of all)
    violations.push(...sepaProfileViolations(transaction, xmlNameOf(transaction)));
  for (const unsupported of message.unsupported)
    violations.push({ name: unsupported.path, reason: unsupported.reason });
  return violations;
};

const tooMany = (count: number): never => {
  throw new BatchTooLargeError(
    `The batch holds ${count} credit transfers; at most ${MAX_BATCH_TRANSACTIONS} are taken in one request`,
  );
};

interface ReadBatch {
  candidates: Candidate[];
  summary: Omit<BatchMessageSummary, 'messageId'> & { messageId?: string };
  requestHash: string;
  /** Faults found before the transfers were checked, reported with theirs. */
  violations: InvalidParam[];
}

/** What the pain.001 identifies itself by: the same rules as every identifier of a transfer. */
const messageIdentifier = identifierText(1, 35);
const identifierViolations = (message: Pain001Message): InvalidParam[] =>
  [
    { value: message.messageId, name: message.messageIdPath },
    ...message.groups.map((group) => ({
      value: group.paymentInformationId,
      name: group.paymentInformationIdPath,
    })),
  ].flatMap(({ value, name }) => {
    const parsed = messageIdentifier.safeParse(value);
    return parsed.success ? [] : toInvalidParams(parsed.error.issues).map(({ reason }) => ({ name, reason }));
  });

const DAY_MS = 24 * 60 * 60 * 1000;
const dayOf = (date: Date) => date.toISOString().slice(0, 10);

/**
 * A group's ReqdExctnDt in the past: up to MAX_PAST_EXECUTION_DAYS, its transfers are executed
 * today and say so; older, the group is rejected whole (one reason for the group, none of its
 * transfers stored) and the rest of the message goes on.
 */
const executionOf = (
  group: MessageGroup,
  now: Date,
): { rejection?: string; moved?: { valueDate: string; note: string } } => {
  const requested = group.executionDate?.value;
  const today = dayOf(now);
  if (requested === undefined || requested >= today) return {};
  const oldest = dayOf(new Date(now.getTime() - MAX_PAST_EXECUTION_DAYS * DAY_MS));
  if (requested < oldest)
    return {
      rejection: `ReqdExctnDt ${requested} is more than ${MAX_PAST_EXECUTION_DAYS} days past: the payment group was not executed`,
    };
  return {
    moved: {
      valueDate: today,
      note: `ReqdExctnDt ${requested} is past: executed on receipt, ${today}`,
    },
  };
};

const readJsonBatch = (value: unknown, servicer: ServicerHeaders): ReadBatch => {
  const parsed = jsonBatchSchema.safeParse(value, {
    error: (issue) => (issue.input === undefined ? 'is required' : undefined),
  });
  if (!parsed.success)
    throw new InvalidRequestError(
      'The batch is not valid: nothing was stored',
      toInvalidParams(parsed.error.issues),
    );
  const { creditTransfers } = parsed.data;
  if (creditTransfers.length > MAX_BATCH_TRANSACTIONS) tooMany(creditTransfers.length);
  const faults = creditTransfers.flatMap((item, index) =>
    item !== null && typeof item === 'object' && !Array.isArray(item)
      ? []
      : [{ name: `creditTransfers[${index}]`, reason: 'must be a credit transfer object' }],
  );
  if (faults.length > 0) throw new InvalidRequestError('The batch is not valid: nothing was stored', faults);
  return {
    candidates: creditTransfers.map((body, index) => ({
      body: body as Record<string, unknown>,
      nameOf: (field) => `creditTransfers[${index}].${field}`.replace(/\.\(body\)$/, ''),
      place: {},
    })),
    summary: { messageName: JSON_BATCH_MESSAGE_NAME, groups: [] },
    requestHash: fingerprint({ batch: value, servicer }),
    violations: [],
  };
};

const readXmlBatch = async (
  reader: Pain001Reader,
  body: string,
  servicer: ServicerHeaders,
  now: Date,
): Promise<ReadBatch> => {
  const text = utf8XmlText(body);
  // Before the parser, in one pass: a message past a bound costs no more than reading it once.
  checkXmlBounds(text, {
    transactions: MAX_BATCH_TRANSACTIONS,
    elements: MAX_XML_ELEMENTS,
    depth: MAX_XML_DEPTH,
    attributes: MAX_XML_ATTRIBUTES,
  });
  const { version, root } = await reader.read(text);
  const message = readPain001(version, root);
  const count = message.groups.reduce((sum, group) => sum + group.transactions.length, 0);
  if (count > MAX_BATCH_TRANSACTIONS) tooMany(count);
  const faults = [...identifierViolations(message), ...groupRuleViolations(message)];
  if (faults.length > 0) throw new InvalidRequestError('The batch is not valid: nothing was stored', faults);
  const candidates: Candidate[] = [];
  const groups: BatchPaymentGroup[] = [];
  const stale: InvalidParam[] = [];
  for (const group of message.groups) {
    const { rejection, moved } = executionOf(group, now);
    if (rejection !== undefined) {
      stale.push({ name: group.executionDate?.path ?? group.path, reason: rejection });
      groups.push({
        paymentInformationId: group.paymentInformationId,
        count: 0,
        rejection: {
          ...STALE_EXECUTION_DATE,
          additionalInformation: rejection,
          transactions: group.transactions.length,
        },
      });
      continue;
    }
    groups.push({
      paymentInformationId: group.paymentInformationId,
      count: group.transactions.length,
      // ISO leaves an absent BtchBookg to the bank's agreement: here, batch booking.
      batchBooking: group.batchBooking ?? true,
    });
    for (const transaction of group.transactions)
      candidates.push({
        body:
          moved === undefined
            ? transaction.transfer
            : { ...transaction.transfer, valueDate: moved.valueDate },
        nameOf: xmlNameOf(transaction),
        place: { paymentInformationId: group.paymentInformationId, ...transaction.identification },
        ...(moved !== undefined && { additionalInformation: moved.note }),
      });
  }
  return {
    candidates,
    summary: {
      messageId: message.messageId,
      messageName: message.version,
      createdAt: message.createdAt,
      ...(message.controlSum !== undefined && { controlSum: message.controlSum.value }),
      groups,
    },
    requestHash: createHash('sha256')
      .update(text)
      .update('\u0000')
      .update(fingerprint({ servicer }))
      .digest('hex'),
    // Every group too old: nothing to take, the message is refused with one line per group.
    violations: candidates.length === 0 ? stale : [],
  };
};

/**
 * The batch's payment controls, all in this one place: the tenant's approval rules read once and
 * applied to each transfer exactly as an initiation applies them (same rule chosen, same expiry;
 * the payment history read per transfer only when a rule asks whether the creditor is new).
 */
const approvalHoldsOf = async (
  approvalRules: CurrentApprovalRules | undefined,
  command: Pick<BatchCommand, 'tenant' | 'clientId'>,
  transfers: readonly { transfer: CreditTransferRequest }[],
  now: Date,
): Promise<BatchApprovalHold[]> => {
  if (approvalRules === undefined) return [];
  const approvalOf = await approvalRules(command.tenant);
  const approvals: (PendingApproval | undefined)[] = [];
  await inPool(transfers, CONCURRENCY, async ({ transfer }, index) => {
    approvals[index] = await approvalOf({ transfer, clientId: command.clientId }, now);
  });
  const holds = new Map<string, BatchApprovalHold>();
  approvals.forEach((approval, position) => {
    if (approval === undefined) return;
    const hold = holds.get(approval.rule) ?? {
      rule: approval.rule,
      approvalsRequired: approval.approvalsRequired,
      expiresAt: approval.expiresAt,
      positions: [],
    };
    hold.positions.push(position);
    holds.set(approval.rule, hold);
  });
  return [...holds.values()];
};

/** The approval each held transfer of the batch waits for, by position. */
export const heldForApproval = (
  batch: Pick<BatchRecord, 'approvalHolds' | 'clientId'>,
): Map<number, PendingApproval> =>
  new Map(
    (batch.approvalHolds ?? []).flatMap(({ positions, ...hold }) =>
      positions.map((position): [number, PendingApproval] => [
        position,
        {
          rule: hold.rule,
          initiatingClientId: batch.clientId,
          approvalsRequired: hold.approvalsRequired,
          approvals: [],
          expiresAt: hold.expiresAt,
        },
      ]),
    ),
  );

/** Asks for the batch's lifecycles; a failure leaves them to the reconciler (the adapter logs it). */
const askForLifecycles = async (
  lifecycles: BatchLifecycleStarter | undefined,
  tenant: string,
  batchId: string,
): Promise<void> => {
  try {
    await lifecycles?.start({ tenant, batchId });
  } catch {
    // The transfers are due in the recovery index (nextCheckAt): the reconciler starts them.
  }
};

/**
 * Takes a batch: every transfer checked first (any fault refuses the whole message, nothing
 * stored), then the batch item, then one conditional write per transfer under a paymentId derived
 * from the batch, then the batch marked stored. A crash anywhere leaves what a repeat of the same
 * request finishes: the same batchId, the same paymentIds, writes that find their item there.
 * The lifecycles are not started here: the request that marks the batch stored asks, once, for
 * them to be started after its answer (2,000 starts would hold the answer for seconds). A transfer
 * an approval rule holds is stored Pending and none is started for it: what the batch item, written
 * first, says is held, so a repeat stores what the first attempt decided.
 */
export const submitBatch = async (
  deps: BatchDependencies,
  command: BatchCommand,
): Promise<BatchAcceptance> => {
  const { tenant, clientId, idempotencyKey, servicer } = command;
  const now = deps.clock.now();
  const read =
    command.body.kind === 'json'
      ? readJsonBatch(command.body.value, servicer)
      : await readXmlBatch(deps.reader, command.body.text, servicer, now);
  const transfers = checkTransfers(
    read.candidates,
    now,
    deps.maxValueDateDays ?? DEFAULT_MAX_VALUE_DATE_DAYS,
    read.violations,
  );
  const approvalHolds = await approvalHoldsOf(deps.approvalRules, command, transfers, now);
  const limitRules = await deps.limitRules?.(tenant);

  let batchId =
    idempotencyKey !== undefined
      ? derivedPaymentId(tenant, 'batch', idempotencyKey)
      : read.summary.messageId !== undefined
        ? derivedPaymentId(tenant, 'batch-message', read.summary.messageId)
        : randomPaymentId();
  const { messageId } = read.summary;
  const candidate: BatchRecord = {
    tenant,
    batchId,
    clientId,
    createdAt: now.toISOString(),
    requestHash: read.requestHash,
    ...(idempotencyKey !== undefined && { idempotencyKey }),
    state: 'Storing',
    count: transfers.length,
    message: { ...read.summary, messageId: messageId ?? compactId(batchId) },
    ...(approvalHolds.length > 0 && { approvalHolds }),
    ...(limitRules !== undefined && { limitRules }),
  };
  let batch = candidate;
  let replayed = false;
  if (!(await deps.batches.create(candidate))) {
    const existing = await deps.batches.get(tenant, batchId);
    if (existing === undefined) throw new Error(`batch ${batchId} is taken and cannot be read`);
    if (existing.requestHash !== read.requestHash) {
      if (idempotencyKey !== undefined) throw new IdempotencyKeyReusedError();
      throw new MessageIdReusedError(messageId ?? batchId);
    }
    batch = existing;
    replayed = true;
  }
  // The MsgId is claimed only for a batch that exists, and before any transfer is stored: a
  // refused request never holds one. A batch that finds its MsgId another's is removed while it
  // holds nothing, so its idempotency key stays free as well.
  if (messageId !== undefined) {
    const claim = await deps.batches.claimMessageId(tenant, messageId, batchId, read.requestHash);
    if (!claim.claimed && claim.existing.batchId !== batchId) {
      await deps.batches.discard(tenant, batchId, read.requestHash);
      if (claim.existing.requestHash !== read.requestHash) throw new MessageIdReusedError(messageId);
      const holder = await deps.batches.get(tenant, claim.existing.batchId);
      if (holder === undefined)
        throw new Error(`batch ${claim.existing.batchId} holds a MsgId and cannot be read`);
      batch = holder;
      batchId = holder.batchId;
      replayed = true;
    }
  }

  const paymentIds = batchPaymentIds(batch);
  if (batch.state === 'Storing') {
    const date = batch.createdAt;
    const held = heldForApproval(batch);
    await inPool(transfers, CONCURRENCY, async ({ transfer, place }, index) => {
      const paymentId = paymentIds[index] as string;
      const approval = held.get(index);
      const status = approval === undefined ? 'Received' : 'Pending';
      const limits =
        batch.limitRules &&
        limitHoldFor(batch.limitRules, transfer, new Date(date), batch.limitRules.approvalExpirySeconds);
      const record: CreditTransferRecord = {
        tenant,
        paymentId,
        clientId,
        createdAt: date,
        status,
        statusDate: date,
        requestHash: fingerprint({ transfer, servicer }),
        servicer,
        transfer,
        origin: originOf(batch.message, place),
        batch: { batchId, position: index },
        history: [{ status, date, actor: clientId }],
        ...(read.candidates[index]?.additionalInformation !== undefined && {
          additionalInformation: read.candidates[index]?.additionalInformation,
        }),
        ...(approval !== undefined && { approval }),
        ...(limits !== undefined && { limits }),
        // Due once its paced start (at the slowest pace) is STALL_SECONDS late: the reconciler never
        // takes a batch's later transfers for stuck while their starts (or their counting) are
        // still coming; a pending one is looked at again when its approval expires.
        nextCheckAt: earliest(
          secondsAfter(now, STALL_SECONDS + index / MIN_BATCH_STARTS_PER_SECOND).toISOString(),
          approval?.expiresAt,
        ),
      };
      // Taken already: stored by the attempt that crashed, under the same derived id.
      await deps.store.create(record);
    });
    const moved = await deps.batches.markStored(tenant, batchId);
    batch = { ...batch, state: 'Stored' };
    // Once per batch, by the request that stored it; a crash before this is the reconciler's.
    if (moved) await askForLifecycles(deps.lifecycles, tenant, batchId);
  }
  return { batch, paymentIds, replayed };
};
