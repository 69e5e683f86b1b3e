import { sumDecimals } from '../commons/decimal.ts';
import { InvalidRequestError, PaymentNotFoundError } from '../commons/errors.ts';
import { paymentIdSchema } from '../credit-transfers/credit-transfer.ts';
import { toCreditTransfer } from '../credit-transfers/credit-transfer-view.ts';
import type { CreditTransferRecord, CreditTransferStore } from '../credit-transfers/ports.ts';
import type { BatchRecord, BatchStore } from './ports.ts';
import { batchPaymentIds } from './submit-batch.ts';
import { compactId, reportedTransaction, reportMessageId } from './transfer-report.ts';
import { leaf, node } from './xml-text.ts';

export const CAMT_054_NAMESPACE = 'urn:iso:std:iso:20022:tech:xsd:camt.054.001.08';

/** ISO's bank transaction code of an issued credit transfer: Payments / Issued Credit Transfers / ... */
const DOMAIN = 'PMNT';
const FAMILY = 'ICDT';
/** SEPA Credit Transfer where the transfer asked for SEPA, else Other. */
const subFamilyOf = (record: CreditTransferRecord): string =>
  record.transfer.paymentProcessing?.serviceLevel === 'SEPA' ? 'ESCT' : 'OTHR';

/** ISO's "no currency" code, for a transfer that named none. */
const NO_CURRENCY = 'XXX';

/** A settled transfer, and when it settled (ISO 8601). */
export interface SettledTransfer {
  record: CreditTransferRecord;
  settledAt: string;
}

/** The payment group (`PmtInf`) whose settled transfers one entry books, as its `BtchBookg` asked. */
export interface BatchBooking {
  /** Tells the group apart within the notification (the batch and the group's place in it). */
  key: string;
  paymentInformationId: string;
}

/**
 * One debit entry of the debtor's account: a settled transfer alone, or (`batch`) the settled
 * transfers of one payment group in one currency, booked together.
 */
export interface NotifiedEntry {
  transfers: SettledTransfer[];
  batch?: BatchBooking;
}

/** A camt.054 debit notification: per debtor account, its booked entries. */
export interface DebitNotification {
  messageId: string;
  createdAt: Date;
  accounts: { accountId: string; notificationId: string; entries: NotifiedEntry[] }[];
}

const SETTLED = 'AcceptedSettlementCompleted';

const settledAtOf = (record: CreditTransferRecord): string =>
  record.history.find((change) => change.status === SETTLED)?.date ?? record.statusDate;

const currencyOf = (record: CreditTransferRecord): string =>
  record.transfer.currency ?? record.transfer.debtor?.account?.currency ?? NO_CURRENCY;

/**
 * The notification of `records` (in order): one account notification per debtor account, in order
 * of first appearance, each with one entry per settled transfer, or per payment group and currency
 * for the transfers `bookingOf` books in a batch (the entry where the group's first settled transfer
 * is); an account with nothing settled yet has no entry. Dated by its latest settlement (else
 * `since`), and named by what it holds.
 */
export const debitNotificationOf = (
  source: string,
  records: readonly CreditTransferRecord[],
  since: string,
  bookingOf: (record: CreditTransferRecord) => BatchBooking | undefined = () => undefined,
): DebitNotification => {
  const accounts = new Map<string, NotifiedEntry[]>();
  const batchEntries = new Map<string, NotifiedEntry>();
  for (const record of records) {
    const { debtorAccountId } = record.transfer;
    const entries = accounts.get(debtorAccountId) ?? [];
    accounts.set(debtorAccountId, entries);
    if (record.status !== SETTLED) continue;
    const settled = { record, settledAt: settledAtOf(record) };
    const batch = bookingOf(record);
    if (batch === undefined) {
      entries.push({ transfers: [settled] });
      continue;
    }
    // One debit of one amount: a group paying in two currencies (or, in a JSON view of it, from two
    // accounts) is booked once per account and currency.
    const key = [batch.key, debtorAccountId, currencyOf(record)].join('\u0000');
    const entry = batchEntries.get(key);
    if (entry !== undefined) entry.transfers.push(settled);
    else {
      const opened = { transfers: [settled], batch: { ...batch, key } };
      batchEntries.set(key, opened);
      entries.push(opened);
    }
  }
  const settled = [...accounts.values()].flat().flatMap((entry) => entry.transfers);
  const latest = settled.reduce((date, entry) => (entry.settledAt > date ? entry.settledAt : date), since);
  return {
    messageId: reportMessageId('camt.054', source, latest, String(settled.length)),
    createdAt: new Date(latest),
    accounts: [...accounts].map(([accountId, entries]) => ({
      accountId,
      notificationId: reportMessageId('camt.054', source, accountId),
      entries,
    })),
  };
};

const IBAN = /^[A-Z]{2}[0-9]{2}[a-zA-Z0-9]{1,30}$/;

const accountOf = (accountId: string): string =>
  node(
    'Acct',
    node(
      'Id',
      IBAN.test(accountId) ? leaf('IBAN', accountId) : node('Othr', leaf('Id', accountId.slice(0, 34))),
    ),
  );

const isoDate = (dateTime: string): string => new Date(dateTime).toISOString().slice(0, 10);

const amountOf = (name: string, record: CreditTransferRecord): string =>
  `<${name} Ccy="${currencyOf(record)}">${record.transfer.amount}</${name}>`;

const bankTransactionCode = (records: readonly CreditTransferRecord[]): string =>
  node(
    'BkTxCd',
    node(
      'Domn',
      leaf('Cd', DOMAIN),
      node(
        'Fmly',
        leaf('Cd', FAMILY),
        // One code for the entry: SEPA only where every transfer it books asked for SEPA.
        leaf('SubFmlyCd', records.every((record) => subFamilyOf(record) === 'ESCT') ? 'ESCT' : 'OTHR'),
      ),
    ),
  );

/** A booked transfer's details: its references as its pain.002 names them, its amount. */
const transactionDetailsOf = (record: CreditTransferRecord): string => {
  const reference = compactId(record.paymentId);
  const ids = reportedTransaction(toCreditTransfer(record), record);
  const origin = record.origin;
  return node(
    'TxDtls',
    node(
      'Refs',
      leaf('MsgId', origin?.messageId ?? reference),
      leaf('AcctSvcrRef', reference),
      leaf('PmtInfId', origin?.paymentInformationId ?? reference),
      leaf('InstrId', ids.instructionId),
      leaf('EndToEndId', ids.endToEndId ?? 'NOTPROVIDED'),
      leaf('UETR', ids.uetr),
    ),
    amountOf('Amt', record),
    leaf('CdtDbtInd', 'DBIT'),
    bankTransactionCode([record]),
  );
};

const entryOf = ({ transfers, batch }: NotifiedEntry): string => {
  const records = transfers.map((transfer) => transfer.record);
  const [first] = records as [CreditTransferRecord, ...CreditTransferRecord[]];
  const bookedAt = transfers.reduce(
    (date, transfer) => (transfer.settledAt > date ? transfer.settledAt : date),
    '',
  );
  // A batch entry's reference is its group's (and currency's), the same however many have settled.
  const reference = batch === undefined ? compactId(first.paymentId) : reportMessageId('camt.054', batch.key);
  const currency = currencyOf(first);
  const amount = sumDecimals(records.map((record) => record.transfer.amount));
  return node(
    'Ntry',
    leaf('NtryRef', reference),
    `<Amt Ccy="${currency}">${amount}</Amt>`,
    leaf('CdtDbtInd', 'DBIT'),
    node('Sts', leaf('Cd', 'BOOK')),
    node('BookgDt', leaf('DtTm', new Date(bookedAt).toISOString())),
    node('ValDt', leaf('Dt', first.transfer.valueDate ?? isoDate(bookedAt))),
    leaf('AcctSvcrRef', reference),
    bankTransactionCode(records),
    node(
      'NtryDtls',
      batch === undefined
        ? ''
        : node(
            'Btch',
            leaf('MsgId', first.origin?.messageId),
            leaf('PmtInfId', batch.paymentInformationId),
            leaf('NbOfTxs', String(records.length)),
            `<TtlAmt Ccy="${currency}">${amount}</TtlAmt>`,
            leaf('CdtDbtInd', 'DBIT'),
          ),
      ...records.map(transactionDetailsOf),
    ),
  );
};

/** The camt.054.001.08 document (BkToCstmrDbtCdtNtfctn), UTF-8 text. */
export const camt054Document = (notification: DebitNotification): string =>
  [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<Document xmlns="${CAMT_054_NAMESPACE}">`,
    node(
      'BkToCstmrDbtCdtNtfctn',
      node(
        'GrpHdr',
        leaf('MsgId', notification.messageId),
        leaf('CreDtTm', notification.createdAt.toISOString()),
      ),
      ...notification.accounts.map((account) =>
        node(
          'Ntfctn',
          leaf('Id', account.notificationId),
          leaf('CreDtTm', notification.createdAt.toISOString()),
          accountOf(account.accountId),
          ...account.entries.map(entryOf),
        ),
      ),
    ),
    '</Document>',
    '',
  ].join('\n');

/** The notification of one transfer: 404 for an unknown one (or another tenant's). */
export const transferNotification = async (
  store: CreditTransferStore,
  query: { tenant: string; paymentId: string | undefined },
): Promise<DebitNotification> => {
  const parsed = paymentIdSchema.safeParse(query.paymentId);
  if (!parsed.success)
    throw new InvalidRequestError('The paymentId is not valid', [
      { name: 'paymentId', reason: 'is not a paymentId' },
    ]);
  const record = await store.get(query.tenant, parsed.data);
  if (record === undefined) throw new PaymentNotFoundError(parsed.data);
  return debitNotificationOf(record.paymentId, [record], record.createdAt);
};

/** The notification of a batch: every transfer read (as its pain.002 reads them), the settled ones booked. */
export const batchNotification = async (
  batches: BatchStore,
  query: { tenant: string; batchId: string | undefined },
): Promise<DebitNotification> => {
  const { batchId } = query;
  if (batchId === undefined || !/^[0-9a-f-]{36}$/.test(batchId))
    throw new InvalidRequestError('The batchId is not valid', [
      { name: 'batchId', reason: 'must be a UUID' },
    ]);
  const batch = await batches.get(query.tenant, batchId);
  if (batch === undefined) throw new PaymentNotFoundError(batchId);
  const records = (await batches.transfers(query.tenant, batchPaymentIds(batch))).flatMap(
    (record) => record ?? [],
  );
  return debitNotificationOf(batch.batchId, records, batch.createdAt, batchBookingOf(batch));
};

/**
 * Which payment group books a batch's transfer with the others of its group: the transfers are
 * stored in message order, each group's after the one before (a group refused whole stored none).
 */
const batchBookingOf = (batch: BatchRecord): ((record: CreditTransferRecord) => BatchBooking | undefined) => {
  const byPosition: (BatchBooking | undefined)[] = [];
  batch.message.groups.forEach((group, index) => {
    const booking = group.batchBooking
      ? { key: `${batch.batchId}/${index}`, paymentInformationId: group.paymentInformationId }
      : undefined;
    for (let count = 0; count < group.count; count++) byPosition.push(booking);
  });
  return (record) => (record.batch === undefined ? undefined : byPosition[record.batch.position]);
};
