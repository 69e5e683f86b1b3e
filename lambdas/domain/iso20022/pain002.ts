import type { CreditTransferStatus } from '../credit-transfers/credit-transfer-status.ts';
import type { GroupStatusCode } from './batch-outcome.ts';
import { statusReasonCodeOf, transactionStatusCodeOf } from './status-codes.ts';
import { leaf, node } from './xml-text.ts';

export const PAIN_002_NAMESPACE = 'urn:iso:std:iso:20022:tech:xsd:pain.002.001.10';
export const XML_MEDIA_TYPE = 'application/xml';

/** One transfer as a report shows it. */
export interface ReportedTransaction {
  instructionId?: string;
  endToEndId?: string;
  /** A UUIDv4, as ISO's UUIDv4Identifier writes it. */
  uetr?: string;
  status: CreditTransferStatus;
  statusReason?: string;
  statusReasonCode?: string;
  /** What the service says of the transfer beside its status (a past ReqdExctnDt executed on receipt). */
  additionalInformation?: string;
  /** When the status was reached (ISO 8601). */
  date: string;
}

/** Why a payment group was rejected whole (`PmtInfSts` RJCT with its `StsRsnInf`). */
export interface GroupRejection {
  statusReason: string;
  statusReasonCode: string;
  additionalInformation: string;
}

export interface ReportedPaymentGroup {
  paymentInformationId: string;
  /** ISO's group status of the group's transfers (`PmtInfSts`); absent on a transfer's own report. */
  status?: GroupStatusCode;
  /** Set when the group was rejected whole at submission: none of its transfers was stored. */
  rejection?: GroupRejection;
  transactions: readonly ReportedTransaction[];
}

/** What a pain.002.001.10 says: the message it answers, and each transfer's status. */
export interface StatusReport {
  messageId: string;
  createdAt: Date;
  original: {
    messageId: string;
    /** The original message's name: `pain.001.001.09`, `pain.001.001.03`, or the JSON request's (see docs/iso20022.md). */
    messageName: string;
    createdAt?: string;
    numberOfTransactions?: number;
    controlSum?: string;
    /** The message's group status (`GrpSts`, see batch-outcome.ts); absent on a transfer's own report. */
    groupStatus?: GroupStatusCode;
  };
  paymentGroups: readonly ReportedPaymentGroup[];
}

/** ISO DateTime without fractions beyond milliseconds, in UTC: what the schema's ISODateTime takes. */
const isoDateTime = (date: Date | string): string => new Date(date).toISOString();

/** ISO's Max105Text, which each AddtlInf is. */
const max105 = (text: string): string => text.slice(0, 105);

const reasonOf = (transaction: ReportedTransaction): string =>
  transaction.statusReason === undefined && transaction.additionalInformation === undefined
    ? ''
    : node(
        'StsRsnInf',
        transaction.statusReason === undefined
          ? ''
          : node(
              'Rsn',
              leaf('Cd', statusReasonCodeOf(transaction.statusReason, transaction.statusReasonCode)),
            ),
        leaf('AddtlInf', transaction.statusReason),
        leaf('AddtlInf', transaction.additionalInformation && max105(transaction.additionalInformation)),
      );

const groupReasonOf = (rejection: GroupRejection | undefined): string =>
  rejection === undefined
    ? ''
    : node(
        'StsRsnInf',
        node('Rsn', leaf('Cd', rejection.statusReasonCode)),
        leaf('AddtlInf', rejection.statusReason),
        leaf('AddtlInf', max105(rejection.additionalInformation)),
      );

const transactionOf = (transaction: ReportedTransaction): string =>
  node(
    'TxInfAndSts',
    leaf('OrgnlInstrId', transaction.instructionId),
    leaf('OrgnlEndToEndId', transaction.endToEndId ?? 'NOTPROVIDED'),
    leaf('OrgnlUETR', transaction.uetr),
    leaf('TxSts', transactionStatusCodeOf(transaction.status)),
    reasonOf(transaction),
    leaf('AccptncDtTm', isoDateTime(transaction.date)),
  );

/** The pain.002.001.10 document of a report, UTF-8 text. */
export const pain002Document = (report: StatusReport): string => {
  const { original } = report;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<Document xmlns="${PAIN_002_NAMESPACE}">`,
    node(
      'CstmrPmtStsRpt',
      node('GrpHdr', leaf('MsgId', report.messageId), leaf('CreDtTm', isoDateTime(report.createdAt))),
      node(
        'OrgnlGrpInfAndSts',
        leaf('OrgnlMsgId', original.messageId),
        leaf('OrgnlMsgNmId', original.messageName),
        leaf('OrgnlCreDtTm', original.createdAt),
        leaf('OrgnlNbOfTxs', original.numberOfTransactions?.toString()),
        leaf('OrgnlCtrlSum', original.controlSum),
        leaf('GrpSts', original.groupStatus),
      ),
      ...report.paymentGroups.map((group) =>
        node(
          'OrgnlPmtInfAndSts',
          leaf('OrgnlPmtInfId', group.paymentInformationId),
          leaf('PmtInfSts', group.status),
          groupReasonOf(group.rejection),
          ...group.transactions.map(transactionOf),
        ),
      ),
    ),
    '</Document>',
    '',
  ].join('\n');
};
