import type { CreditTransferRecord } from './ports.ts';

/** What the filters look at, taken from one transfer. */
export interface ListEntry {
  paymentMethod: string;
  amount: string;
  debtorAccountId: string;
  creditorAccountId?: string;
  creditorAccountNumber?: string;
  checkType?: string;
  checkNumber?: string;
  /** `check.availabilityDate` as a UTC date (YYYY-MM-DD). */
  checkDate?: string;
  /** The pain.001's `PmtId/EndToEndId` and `InstrId`, or the identifiers of those schemes. */
  endToEndId?: string;
  instructionId?: string;
  /** The batch it came in. */
  batchId?: string;
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::\d{2}(?:\.\d+)?)?(Z|([+-])(\d{2}):(\d{2}))$/i;
const MINUTES_PER_DAY = 24 * 60;

/**
 * The UTC date of an ISO 8601 date-time with offset: "2026-12-01T23:30:00-01:00" is 2026-12-02.
 * Undefined when it is not one.
 */
export const utcDateOf = (dateTime: string): string | undefined => {
  const match = DATE_TIME.exec(dateTime);
  if (match === null) return undefined;
  const [, year, month, day, hour, minute, zone, sign, offsetHours, offsetMinutes] = match;
  const offset =
    zone?.toUpperCase() === 'Z'
      ? 0
      : (sign === '-' ? -1 : 1) * (Number(offsetHours) * 60 + Number(offsetMinutes));
  const minutes = Number(hour) * 60 + Number(minute) - offset;
  const dayShift = Math.floor(minutes / MINUTES_PER_DAY);
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0 to 99 as 1900 to 1999.
  date.setUTCFullYear(Number(year), Number(month) - 1, Number(day) + dayShift);
  const utcYear = date.getUTCFullYear();
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${String(utcYear).padStart(4, '0')}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`;
};

/** The fields the list filters look at. Absent fields stay absent: a filter on them never matches. */
/** An identifier of the transfer under `schemeName` (the JSON API's place for InstrId and EndToEndId). */
const identifierOf = (record: Pick<CreditTransferRecord, 'transfer'>, schemeName: string) =>
  record.transfer.identifiers?.find((identifier) => identifier.schemeName === schemeName)?.number;

export const listEntryOf = (
  record: Pick<CreditTransferRecord, 'transfer'> & Partial<Pick<CreditTransferRecord, 'origin' | 'batch'>>,
): ListEntry => {
  const { paymentMethod, amount, debtorAccountId, creditorAccountId, creditor, check } = record.transfer;
  // As the transfer's reports name them (transfer-report.ts): the message's own, else the identifiers.
  const endToEndId = record.origin?.endToEndId ?? identifierOf(record, 'EndToEndId');
  const instructionId = record.origin?.instructionId ?? identifierOf(record, 'InstrId');
  const creditorAccountNumber = creditor?.account?.accountNumber;
  const checkDate = check?.availabilityDate === undefined ? undefined : utcDateOf(check.availabilityDate);
  return {
    paymentMethod,
    amount,
    debtorAccountId,
    ...(creditorAccountId !== undefined && { creditorAccountId }),
    ...(creditorAccountNumber !== undefined && { creditorAccountNumber }),
    ...(check?.checkType !== undefined && { checkType: check.checkType }),
    ...(check?.checkNumber !== undefined && { checkNumber: check.checkNumber }),
    ...(checkDate !== undefined && { checkDate }),
    ...(endToEndId !== undefined && { endToEndId }),
    ...(instructionId !== undefined && { instructionId }),
    ...(record.batch !== undefined && { batchId: record.batch.batchId }),
  };
};
