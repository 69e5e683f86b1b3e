import type { CreditTransferStatus } from '../credit-transfers/credit-transfer-status.ts';
import { STATUS_REASON_CODE_SET } from './status-reason-code-set.ts';

/**
 * The ISO 20022 transaction status code (ExternalPaymentTransactionStatus1Code) of each status:
 * the one table the JSON API, pain.002 reports and the docs (docs/iso20022.md) use.
 */
export const TRANSACTION_STATUS_CODES = {
  Pending: 'PDNG',
  Received: 'RCVD',
  AcceptedTechnicalValidation: 'ACTC',
  AcceptedCustomerProfile: 'ACCP',
  AcceptedSettlementInProcess: 'ACSP',
  AcceptedSettlementCompleted: 'ACSC',
  Rejected: 'RJCT',
  Cancelled: 'CANC',
} as const satisfies Record<CreditTransferStatus, string>;

export type TransactionStatusCode = (typeof TRANSACTION_STATUS_CODES)[CreditTransferStatus];

export const transactionStatusCodeOf = (status: CreditTransferStatus): TransactionStatusCode =>
  TRANSACTION_STATUS_CODES[status];

/**
 * Status reasons are ISO's external code set ExternalStatusReason1Code, read from ISO's file at
 * build time (status-reason-code-set.ts, `npm run iso:codes`): each code with its ISO Name, the
 * long name `statusReason` shows (`InsufficientFunds` for AM04).
 */
export type StatusReasonCode = keyof typeof STATUS_REASON_CODE_SET;
export type KnownStatusReason = (typeof STATUS_REASON_CODE_SET)[StatusReasonCode];

/** Every code of the set, in ISO's order: what `statusReasonCode` can be. */
export const STATUS_REASON_CODES = Object.keys(STATUS_REASON_CODE_SET) as StatusReasonCode[];

const codesByName: ReadonlyMap<string, StatusReasonCode> = new Map(
  Object.entries(STATUS_REASON_CODE_SET).map(([code, name]) => [name, code as StatusReasonCode]),
);

export const isStatusReasonCode = (code: string): code is StatusReasonCode =>
  Object.hasOwn(STATUS_REASON_CODE_SET, code);

/** ISO's code of a reason told in words (Narrative): a reason the set has no name for. */
export const NARRATIVE_REASON_CODE = codesByName.get('Narrative') as StatusReasonCode;

/** An ExternalStatusReason1Code as the schema (Max4Text) and the code set write it. */
export const STATUS_REASON_CODE_PATTERN = /^[A-Z0-9]{4}$/;

/**
 * The code of a reason: the code the rail gave with it when the set has it, else the code of the
 * reason's ISO name, else NARR (a reason without an ISO name is still reported, as a narrative).
 * A code outside the set is never passed on as ISO's.
 */
export const statusReasonCodeOf = (statusReason: string, given?: string): StatusReasonCode =>
  given !== undefined && isStatusReasonCode(given)
    ? given
    : (codesByName.get(statusReason) ?? NARRATIVE_REASON_CODE);

/** The ISO name of a code of the set, for a rail that gives only the code. */
export const statusReasonNameOf = (code: string): KnownStatusReason | undefined =>
  isStatusReasonCode(code) ? STATUS_REASON_CODE_SET[code] : undefined;
