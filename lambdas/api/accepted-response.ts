import type { APIGatewayProxyResult } from 'aws-lambda';
import type { CreditTransfer } from '#domain/credit-transfer';
import { jsonResponse } from '#shared/http-event';

/** The 202 of an initiation or cancellation: the transfer, where to follow it, and whether it is a replay. */
export const acceptedResponse = (creditTransfer: CreditTransfer, replayed: boolean): APIGatewayProxyResult =>
  jsonResponse(202, creditTransfer, {
    Location: `/v1/payments/credit-transfers/${encodeURIComponent(creditTransfer.paymentId)}/status`,
    ...(replayed && { 'Idempotent-Replayed': 'true' }),
  });
