export type { components, operations, paths } from './api-types.ts';
export {
  type CallOptions,
  CreditTransfersClient,
  type CreditTransfersClientOptions,
  FINAL_STATUSES,
  type IdempotentCallOptions,
  isFinal,
  type ListOptions,
  type ListPageOptions,
  PAYMENT_STATUSES,
  type StatusOptions,
  type WaitOptions,
} from './client.ts';
export { parseDuration } from './duration.ts';
export {
  ApiError,
  type ApiErrorBody,
  type CallKind,
  CreditTransfersError,
  type InvalidParam,
  LockedError,
  NetworkError,
  type RequestLine,
  StateFileError,
  WaitTimeoutError,
} from './errors.ts';
export {
  DEFAULT_STUCK_AFTER_MS,
  type PollOptions,
  type PollResult,
  pollOnce,
  type StatusChange,
  type StuckTransfer,
} from './poll.ts';
export type { RetryOptions } from './retry.ts';
export { TokenManager, type TokenManagerOptions } from './token-manager.ts';
export type {
  Account,
  Agent,
  AgentIdentifier,
  CancellationRequest,
  CreditTransfer,
  CreditTransferAnswer,
  CreditTransferRequest,
  ErrorCode,
  GenericTransactionCode,
  ListFilters,
  ListPage,
  NotModifiedResult,
  PartyIdentification,
  PartyIdentifier,
  PaymentIdentification,
  PaymentStatus,
  PostalAddress,
  Problem,
  ResponseInfo,
  StatusReport,
  StatusResult,
  TokenResponse,
} from './types.ts';
