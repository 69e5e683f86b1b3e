import type { APIGatewayProxyResult } from 'aws-lambda';
import type { CreditTransfer } from '#domain/credit-transfers/credit-transfer';
import { jsonResponse } from '#shared/http-event';

/**
 * The 202 of an initiation or cancellation: the transfer, where to follow it (an absolute URL
 * under the configured public URL, never one built from the request's Host), and whether it is
 * a replay. The handler reads `baseUrl` before it writes anything: a configuration fault must
 * not turn a stored payment into a 500.
 */
export const acceptedResponse = (
  baseUrl: string,
  creditTransfer: CreditTransfer,
  replayed: boolean,
): APIGatewayProxyResult =>
  jsonResponse(202, creditTransfer, {
    Location: `${baseUrl}/v1/payments/credit-transfers/${encodeURIComponent(creditTransfer.paymentId)}/status`,
    ...(replayed && { 'Idempotent-Replayed': 'true' }),
  });
