import type { CreditTransferStatus } from '../credit-transfers/credit-transfer-status.ts';

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
 * Every status reason the service gives (its ISO 20022 name, as `statusReason` shows it) and its
 * ISO ExternalStatusReason1Code, as `statusReasonCode` shows it. Names and codes are those of
 * ISO's external code set ExternalStatusReason1Code (docs/iso20022.md says which release).
 */
export const STATUS_REASON_CODES = {
  RequestedByCustomer: 'CUST',
  ClosedAccountNumber: 'AC04',
  BlockedAccount: 'AC06',
  InsufficientFunds: 'AM04',
  TransactionForbidden: 'AG01',
  RegulatoryReason: 'RR04',
  DuplicatePayment: 'DUPL',
  InvalidFileFormat: 'FF01',
  ZeroAmount: 'AM01',
  IncorrectAccountNumber: 'AC01',
  NotSpecifiedReasonCustomerGenerated: 'MS02',
  NotSpecifiedReasonAgentGenerated: 'MS03',
  Narrative: 'NARR',
  // Payment controls (docs/approvals.md): an approver's rejection, an approval that expired, a limit.
  OrderCancelled: 'DS02',
  WaitingTimeExpired: 'DS24',
  AmountExceedsAgreedLimit: 'AM14',
} as const;

export type KnownStatusReason = keyof typeof STATUS_REASON_CODES;

/** What a reason name without a code of its own is reported under: a narrative reason. */
export const NARRATIVE_REASON_CODE = STATUS_REASON_CODES.Narrative;

/** An ExternalStatusReason1Code as the schema (Max4Text) and the code set write it. */
export const STATUS_REASON_CODE_PATTERN = /^[A-Z0-9]{4}$/;

const reasonNames: ReadonlyMap<string, KnownStatusReason> = new Map(
  Object.entries(STATUS_REASON_CODES).map(([name, code]) => [code, name as KnownStatusReason]),
);

/**
 * The code of a reason: the code the rail gave with it, else the table's, else NARR (a reason the
 * table does not know is still reported, as a narrative).
 */
export const statusReasonCodeOf = (statusReason: string, given?: string): string =>
  given ?? (STATUS_REASON_CODES as Record<string, string>)[statusReason] ?? NARRATIVE_REASON_CODE;

/** The ISO name of a code the table knows, for a rail that gives only the code. */
export const statusReasonNameOf = (code: string): KnownStatusReason | undefined => reasonNames.get(code);
