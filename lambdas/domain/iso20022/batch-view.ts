import { InvalidRequestError, PaymentNotFoundError } from '../commons/errors.ts';
import type { CreditTransferStatus } from '../credit-transfers/credit-transfer-status.ts';
import { toCreditTransfer } from '../credit-transfers/credit-transfer-view.ts';
import { batchTallyOf, type GroupStatusCode, groupStatusOf, tallyOf } from './batch-outcome.ts';
import type { StatusReport } from './pain002.ts';
import type { BatchRecord, BatchStore, PaymentGroupRejection } from './ports.ts';
import { batchPaymentIds } from './submit-batch.ts';
import { reportedTransaction, reportMessageId } from './transfer-report.ts';

/** Transfers on one page of a batch read. */
export const BATCH_PAGE_SIZE = 100;

export interface BatchTransferStatus {
  paymentId: string;
  status: CreditTransferStatus;
  statusReason?: string;
  statusReasonCode?: string;
  date: string;
}

/** What the API shows of a batch. */
export interface BatchView {
  batchId: string;
  /**
   * `Accepted` once every transfer is stored; `Incomplete` after a crash, until the same request is
   * sent again; `Completed` once every transfer is final.
   */
  status: 'Accepted' | 'Incomplete' | 'Completed';
  count: number;
  createdAt: string;
  messageId: string;
  messageName: string;
  rejectedPaymentGroups?: RejectedPaymentGroup[];
  /** The outcome so far (absent on a batch stored before outcomes were kept). */
  groupStatus?: GroupStatusCode;
  open?: number;
  countsByStatus?: Record<string, number>;
  countsByReasonCode?: Record<string, number>;
  completedAt?: string;
}

export interface RejectedPaymentGroup {
  paymentInformationId: string;
  statusReasonCode: string;
  statusReason: string;
  reason: string;
  transactions: number;
}

const rejectedGroupsOf = (batch: BatchRecord): RejectedPaymentGroup[] =>
  batch.message.groups.flatMap(({ paymentInformationId, rejection }) =>
    rejection === undefined
      ? []
      : [
          {
            paymentInformationId,
            statusReasonCode: rejection.statusReasonCode,
            statusReason: rejection.statusReason,
            reason: rejection.additionalInformation,
            transactions: rejection.transactions,
          },
        ],
  );

export const batchViewOf = (batch: BatchRecord): BatchView => {
  const rejected = rejectedGroupsOf(batch);
  return {
    batchId: batch.batchId,
    status:
      batch.completedAt !== undefined ? 'Completed' : batch.state === 'Stored' ? 'Accepted' : 'Incomplete',
    count: batch.count,
    createdAt: batch.createdAt,
    messageId: batch.message.messageId,
    messageName: batch.message.messageName,
    ...(rejected.length > 0 && { rejectedPaymentGroups: rejected }),
    ...(batch.open !== undefined && {
      groupStatus: groupStatusOf(batchTallyOf(batch)),
      open: batchTallyOf(batch).open,
      countsByStatus: batch.countsByStatus ?? {},
      countsByReasonCode: batch.countsByReasonCode ?? {},
    }),
    ...(batch.completedAt !== undefined && { completedAt: batch.completedAt }),
  };
};

const loadBatch = async (
  batches: BatchStore,
  tenant: string,
  batchId: string | undefined,
): Promise<BatchRecord> => {
  if (batchId === undefined || !/^[0-9a-f-]{36}$/.test(batchId))
    throw new InvalidRequestError('The batchId is not valid', [
      { name: 'batchId', reason: 'must be a UUID' },
    ]);
  const batch = await batches.get(tenant, batchId);
  // Another tenant's batch is answered exactly as an unknown one.
  if (batch === undefined) throw new PaymentNotFoundError(batchId);
  return batch;
};

/** One page of a batch's transfers with their current statuses, in message order; `next` names the following page. */
export const getBatchPage = async (
  batches: BatchStore,
  query: { tenant: string; batchId: string | undefined; cursor?: string | undefined },
): Promise<BatchView & { creditTransfers: BatchTransferStatus[]; next?: string }> => {
  const batch = await loadBatch(batches, query.tenant, query.batchId);
  const start = query.cursor === undefined ? 0 : Number(query.cursor);
  if (
    !Number.isSafeInteger(start) ||
    start < 0 ||
    start % BATCH_PAGE_SIZE !== 0 ||
    (start > 0 && start >= batch.count)
  )
    throw new InvalidRequestError('The cursor is not valid', [
      { name: 'cursor', reason: 'is not a cursor this batch gave' },
    ]);
  const paymentIds = batchPaymentIds(batch).slice(start, start + BATCH_PAGE_SIZE);
  const records = await batches.transfers(query.tenant, paymentIds);
  const creditTransfers = records.flatMap((record) =>
    record === undefined
      ? []
      : [
          {
            paymentId: record.paymentId,
            status: record.status,
            ...(record.statusReason !== undefined && {
              statusReason: record.statusReason,
              statusReasonCode: toCreditTransfer(record).statusReasonCode as string,
            }),
            date: record.statusDate,
          },
        ],
  );
  const next = start + BATCH_PAGE_SIZE < batch.count ? String(start + BATCH_PAGE_SIZE) : undefined;
  return { ...batchViewOf(batch), creditTransfers, ...(next !== undefined && { next }) };
};

/**
 * The pain.002 of a batch: the original message's group header and, per payment group, every
 * transfer's status (all of them: a report is not paged). Dated by its latest status change.
 */
export const batchStatusReport = async (
  batches: BatchStore,
  query: { tenant: string; batchId: string | undefined },
): Promise<StatusReport> => {
  const batch = await loadBatch(batches, query.tenant, query.batchId);
  const records = await batches.transfers(query.tenant, batchPaymentIds(batch));
  // A transfer not (yet) stored is open: it counts against completion.
  const transactions = records.map((record) =>
    record === undefined ? undefined : reportedTransaction(toCreditTransfer(record), record),
  );
  const statusesOf = (slice: typeof transactions) =>
    slice.map((transaction) => transaction?.status ?? 'Received');
  const latest = transactions.reduce(
    (date, transaction) => (transaction !== undefined && transaction.date > date ? transaction.date : date),
    batch.createdAt,
  );
  const groups =
    batch.message.groups.length > 0
      ? batch.message.groups
      : [{ paymentInformationId: batch.message.messageId, count: batch.count }];
  let offset = 0;
  return {
    messageId: reportMessageId(batch.batchId, latest, String(transactions.filter(Boolean).length)),
    createdAt: new Date(latest),
    original: {
      messageId: batch.message.messageId,
      messageName: batch.message.messageName,
      ...(batch.message.createdAt !== undefined && { createdAt: batch.message.createdAt }),
      numberOfTransactions: batch.count,
      ...(batch.message.controlSum !== undefined && { controlSum: batch.message.controlSum }),
      groupStatus: groupStatusOf(tallyOf(statusesOf(transactions))),
    },
    paymentGroups: groups.map((group) => {
      const slice = transactions.slice(offset, offset + group.count);
      offset += group.count;
      const { rejection } = group as { rejection?: PaymentGroupRejection };
      // Rejected whole at submission: none of its transfers was stored, its reason is the group's.
      if (rejection !== undefined)
        return {
          paymentInformationId: group.paymentInformationId,
          status: 'RJCT' as const,
          rejection,
          transactions: [],
        };
      return {
        paymentInformationId: group.paymentInformationId,
        status: groupStatusOf(tallyOf(statusesOf(slice))),
        transactions: slice.flatMap((transaction) => transaction ?? []),
      };
    }),
  };
};

/** The pain.002 answering a batch just accepted: the whole message accepted (GrpSts ACCP). */
export const acceptanceReport = (batch: BatchRecord): StatusReport => ({
  messageId: reportMessageId(batch.batchId, 'acceptance'),
  createdAt: new Date(batch.createdAt),
  original: {
    messageId: batch.message.messageId,
    messageName: batch.message.messageName,
    ...(batch.message.createdAt !== undefined && { createdAt: batch.message.createdAt }),
    numberOfTransactions: batch.count,
    ...(batch.message.controlSum !== undefined && { controlSum: batch.message.controlSum }),
    groupStatus: 'ACCP',
  },
  paymentGroups: [],
});
