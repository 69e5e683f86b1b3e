import { createHash } from 'node:crypto';
import type { CreditTransfer } from '../credit-transfers/credit-transfer.ts';
import type { ReportedTransaction, StatusReport } from './pain002.ts';

/** The message name a report gives a transfer initiated by the JSON API (no pain.001 behind it). */
export const JSON_MESSAGE_NAME = 'CreditTransferInitiationJSON';

/** The identifiers' scheme names that carry a pain.001's `InstrId` and `EndToEndId` (docs/iso20022.md). */
export const INSTRUCTION_ID_SCHEME = 'InstrId';
export const END_TO_END_ID_SCHEME = 'EndToEndId';

const identifierOf = (transfer: Pick<CreditTransfer, 'identifiers'>, schemeName: string) =>
  transfer.identifiers?.find((identifier) => identifier.schemeName === schemeName)?.number;

/** An id of at most 35 characters (ISO's Max35Text): a UUID without its hyphens. */
export const compactId = (id: string): string => id.replaceAll('-', '').slice(0, 35);

/**
 * A report's own MsgId, derived from what it reports: the same report always has the same id
 * (and the same entity tag), a new status a new one.
 */
export const reportMessageId = (...parts: string[]): string =>
  createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 35);

export const reportedTransaction = (transfer: CreditTransfer): ReportedTransaction => {
  const instructionId = identifierOf(transfer, INSTRUCTION_ID_SCHEME);
  const endToEndId = identifierOf(transfer, END_TO_END_ID_SCHEME);
  return {
    ...(instructionId !== undefined && { instructionId: instructionId.slice(0, 35) }),
    ...(endToEndId !== undefined && { endToEndId: endToEndId.slice(0, 35) }),
    status: transfer.status,
    ...(transfer.statusReason !== undefined && { statusReason: transfer.statusReason }),
    ...(transfer.statusReasonCode !== undefined && { statusReasonCode: transfer.statusReasonCode }),
    date: transfer.date,
  };
};

/**
 * The pain.002 of one transfer initiated by the JSON API: the original message is the transfer
 * itself (its paymentId, compacted to 35 characters), and the report is dated by its status.
 */
export const transferStatusReport = (transfer: CreditTransfer): StatusReport => ({
  messageId: reportMessageId(transfer.paymentId, transfer.status, transfer.date),
  createdAt: new Date(transfer.date),
  original: { messageId: compactId(transfer.paymentId), messageName: JSON_MESSAGE_NAME },
  paymentGroups: [
    { paymentInformationId: compactId(transfer.paymentId), transactions: [reportedTransaction(transfer)] },
  ],
});
