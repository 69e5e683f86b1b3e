import type { BatchApprovalRequest, BatchApprovalResult, PaymentControlsUsage } from './types.ts';

/**
 * Routes the SDK calls before the OpenAPI document describes them, in the generated types'
 * shape so the same typed client calls them. When api-types.ts gains them, delete this file and
 * call them through `paths`.
 */
export interface HandTypedPaths {
  '/v1/payment-controls/usage': {
    get: {
      parameters: {
        query: { debtorAccountId: string; currency: string };
        header?: never;
        path?: never;
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        200: { headers: { [name: string]: unknown }; content: { 'application/json': PaymentControlsUsage } };
      };
    };
  };
  '/v1/payments/credit-transfer-batches/{batchId}/approvals': {
    post: {
      parameters: {
        query?: never;
        header?: { 'Idempotency-Key'?: string };
        path: { batchId: string };
        cookie?: never;
      };
      requestBody: { content: { 'application/json': BatchApprovalRequest } };
      responses: {
        200: { headers: { [name: string]: unknown }; content: { 'application/json': BatchApprovalResult } };
      };
    };
  };
}
