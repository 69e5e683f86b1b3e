import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { CreditTransfer } from '#domain/credit-transfer';
import { basePathOf, jsonResponse } from '#shared/http-event';

/** The 202 of an initiation or cancellation: the transfer, where to follow it, and whether it is a replay. */
export const acceptedResponse = (
  event: APIGatewayProxyEvent,
  creditTransfer: CreditTransfer,
  replayed: boolean,
): APIGatewayProxyResult =>
  jsonResponse(202, creditTransfer, {
    Location: `${basePathOf(event)}/v1/payments/credit-transfers/${encodeURIComponent(creditTransfer.paymentId)}/status`,
    ...(replayed && { 'Idempotent-Replayed': 'true' }),
  });
