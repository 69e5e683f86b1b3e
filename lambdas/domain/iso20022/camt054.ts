import { InvalidRequestError, PaymentNotFoundError } from '../commons/errors.ts';
import { paymentIdSchema } from '../credit-transfers/credit-transfer.ts';
import { toCreditTransfer } from '../credit-transfers/credit-transfer-view.ts';
import type { CreditTransferRecord, CreditTransferStore } from '../credit-transfers/ports.ts';
import type { BatchStore } from './ports.ts';
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

/** One settled transfer as a debit entry of its debtor's account. */
export interface NotifiedEntry {
  record: CreditTransferRecord;
  /** When it settled (ISO 8601). */
  settledAt: string;
}

/** A camt.054 debit notification: per debtor account, its settled transfers. */
export interface DebitNotification {
  messageId: string;
  createdAt: Date;
  accounts: { accountId: string; notificationId: string; entries: NotifiedEntry[] }[];
}

const SETTLED = 'AcceptedSettlementCompleted';

const settledAtOf = (record: CreditTransferRecord): string =>
  record.history.find((change) => change.status === SETTLED)?.date ?? record.statusDate;

/**
 * The notification of `records` (in order): one account notification per debtor account, in order
 * of first appearance, each with one entry per settled transfer; an account with nothing settled
 * yet has no entry. Dated by its latest settlement (else `since`), and named by what it holds.
 */
export const debitNotificationOf = (
  source: string,
  records: readonly CreditTransferRecord[],
  since: string,
): DebitNotification => {
  const accounts = new Map<string, NotifiedEntry[]>();
  for (const record of records) {
    const entries = accounts.get(record.transfer.debtorAccountId) ?? [];
    accounts.set(record.transfer.debtorAccountId, entries);
    if (record.status === SETTLED) entries.push({ record, settledAt: settledAtOf(record) });
  }
  const settled = [...accounts.values()].flat();
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

const amountOf = (name: string, record: CreditTransferRecord): string => {
  const currency = record.transfer.currency ?? record.transfer.debtor?.account?.currency ?? NO_CURRENCY;
  return `<${name} Ccy="${currency}">${record.transfer.amount}</${name}>`;
};

const bankTransactionCode = (record: CreditTransferRecord): string =>
  node(
    'BkTxCd',
    node(
      'Domn',
      leaf('Cd', DOMAIN),
      node('Fmly', leaf('Cd', FAMILY), leaf('SubFmlyCd', subFamilyOf(record))),
    ),
  );

const entryOf = ({ record, settledAt }: NotifiedEntry): string => {
  const reference = compactId(record.paymentId);
  const ids = reportedTransaction(toCreditTransfer(record), record);
  const origin = record.origin;
  return node(
    'Ntry',
    leaf('NtryRef', reference),
    amountOf('Amt', record),
    leaf('CdtDbtInd', 'DBIT'),
    node('Sts', leaf('Cd', 'BOOK')),
    node('BookgDt', leaf('DtTm', new Date(settledAt).toISOString())),
    node('ValDt', leaf('Dt', record.transfer.valueDate ?? isoDate(settledAt))),
    leaf('AcctSvcrRef', reference),
    bankTransactionCode(record),
    node(
      'NtryDtls',
      node(
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
        bankTransactionCode(record),
      ),
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
  return debitNotificationOf(batch.batchId, records, batch.createdAt);
};
