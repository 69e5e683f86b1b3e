export type { components, operations, paths } from './api-types.ts';
export {
  type CallOptions,
  type CancellationRequest,
  type CreditTransfer,
  type CreditTransferRequest,
  CreditTransfersClient,
  type CreditTransfersClientOptions,
  FINAL_STATUSES,
  isFinal,
  type ListFilters,
  type ListPage,
  type PaymentStatus,
  type StatusReport,
  type StatusResult,
  type WaitOptions,
} from './client.ts';
export { parseDuration } from './duration.ts';
export {
  ApiError,
  CreditTransfersError,
  type InvalidParam,
  NetworkError,
  WaitTimeoutError,
} from './errors.ts';
export {
  type PollOptions,
  type PollResult,
  pollOnce,
  type StatusChange,
  type StuckTransfer,
} from './poll.ts';
export type { RetryOptions } from './retry.ts';
export { TokenManager, type TokenManagerOptions, type TokenResponse } from './token-manager.ts';
