import { createHash } from 'node:crypto';
import type { CreditTransfer } from '../credit-transfers/credit-transfer.ts';
import type { CreditTransferRecord } from '../credit-transfers/ports.ts';
import type { ReportedTransaction, StatusReport } from './pain002.ts';

/** The message name a report gives a transfer initiated alone by the JSON API (no pain.001 behind it). */
export const JSON_MESSAGE_NAME = 'CreditTransferInitiationJSON';

/** The identifiers' scheme names that carry a pain.001's `InstrId`, `EndToEndId` and `UETR` (docs/iso20022.md). */
export const INSTRUCTION_ID_SCHEME = 'InstrId';
export const END_TO_END_ID_SCHEME = 'EndToEndId';
export const UETR_SCHEME = 'UETR';

const identifierOf = (transfer: Pick<CreditTransfer, 'identifiers'>, schemeName: string) =>
  transfer.identifiers?.find((identifier) => identifier.schemeName === schemeName)?.number;

/** An id of at most 35 characters (ISO's Max35Text): a UUID without its hyphens. */
export const compactId = (id: string): string => id.replaceAll('-', '').slice(0, 35);

/** ISO's UUIDv4Identifier, the only form `OrgnlUETR` takes. */
const UETR_PATTERN = /^[a-f0-9]{8}-[a-f0-9]{4}-4[a-f0-9]{3}-[89ab][a-f0-9]{3}-[a-f0-9]{12}$/;

/**
 * A report's own MsgId, derived from what it reports: the same report always has the same id
 * (and the same entity tag), a new status a new one.
 */
export const reportMessageId = (...parts: string[]): string =>
  createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 35);

/** What a report reads of the stored transfer beyond its view: its original message, the service's note. */
export type StoredReportFields = Partial<Pick<CreditTransferRecord, 'origin' | 'additionalInformation'>>;

/**
 * One transfer as a report shows it: the ids its original message gave (`PmtId`), else those its
 * JSON identifiers carry under the schemes InstrId, EndToEndId and UETR.
 */
export const reportedTransaction = (
  transfer: CreditTransfer,
  { origin, additionalInformation }: StoredReportFields = {},
): ReportedTransaction => {
  const instructionId = origin?.instructionId ?? identifierOf(transfer, INSTRUCTION_ID_SCHEME);
  const endToEndId = origin?.endToEndId ?? identifierOf(transfer, END_TO_END_ID_SCHEME);
  const uetr = origin?.uetr ?? identifierOf(transfer, UETR_SCHEME);
  return {
    ...(instructionId !== undefined && { instructionId: instructionId.slice(0, 35) }),
    ...(endToEndId !== undefined && { endToEndId: endToEndId.slice(0, 35) }),
    ...(uetr !== undefined && UETR_PATTERN.test(uetr) && { uetr }),
    status: transfer.status,
    ...(transfer.statusReason !== undefined && { statusReason: transfer.statusReason }),
    ...(transfer.statusReasonCode !== undefined && { statusReasonCode: transfer.statusReasonCode }),
    ...(additionalInformation !== undefined && { additionalInformation }),
    date: transfer.date,
  };
};

/**
 * The pain.002 of one transfer, dated by its status. A transfer that came in a batch names its
 * original message (MsgId, message name, CreDtTm, PmtInfId) and its own ids in it; one initiated
 * alone by the JSON API says so: its original message is the transfer itself (its paymentId,
 * compacted to 35 characters) named `CreditTransferInitiationJSON`.
 */
export const transferStatusReport = (
  transfer: CreditTransfer,
  stored: StoredReportFields = {},
): StatusReport => {
  const { origin } = stored;
  return {
    messageId: reportMessageId(transfer.paymentId, transfer.status, transfer.date),
    createdAt: new Date(transfer.date),
    original:
      origin === undefined
        ? { messageId: compactId(transfer.paymentId), messageName: JSON_MESSAGE_NAME }
        : {
            messageId: origin.messageId,
            messageName: origin.messageName,
            ...(origin.createdAt !== undefined && { createdAt: origin.createdAt }),
          },
    paymentGroups: [
      {
        paymentInformationId: origin?.paymentInformationId ?? compactId(transfer.paymentId),
        transactions: [reportedTransaction(transfer, stored)],
      },
    ],
  };
};
