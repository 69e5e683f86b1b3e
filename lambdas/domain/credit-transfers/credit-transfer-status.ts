/**
 * The statuses of a credit transfer, apart from the request schemas: the lifecycle and the store
 * need only these, and a function that never reads a request does not build its schemas.
 */
export const CREDIT_TRANSFER_STATUSES = [
  // Held for approval (docs/approvals.md): no workflow runs until it is approved.
  'Pending',
  'Received',
  'AcceptedTechnicalValidation',
  'AcceptedCustomerProfile',
  'AcceptedSettlementInProcess',
  'AcceptedSettlementCompleted',
  'Rejected',
  'Cancelled',
] as const;

export type CreditTransferStatus = (typeof CREDIT_TRANSFER_STATUSES)[number];

export const FINAL_STATUSES: ReadonlySet<CreditTransferStatus> = new Set([
  'AcceptedSettlementCompleted',
  'Rejected',
  'Cancelled',
]);

/**
 * Fields only the service sets; a request carrying one is refused. Kept here, apart from the
 * schemas, since every request's validation names them.
 */
export const RESPONSE_ONLY_FIELDS = [
  'paymentId',
  'status',
  'statusReason',
  'statusReasonCode',
  'date',
] as const;
