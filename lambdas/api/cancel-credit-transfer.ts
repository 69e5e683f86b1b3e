import type { APIGatewayProxyResult } from 'aws-lambda';
import {
  type CancellationDependencies,
  cancelCreditTransfer as cancel,
} from '#domain/credit-transfers/cancel-credit-transfer';
import { publicUrl } from '#shared/config';
import { callerOf } from '#shared/http-event';
import { jsonHttpHandler } from '#shared/http-handler';
import type { JsonEvent } from '#shared/middleware';
import { acceptedResponse } from './accepted-response.ts';
import { idempotencyKey, servicerHeaders } from './request-headers.ts';
import { cancellationDependencies } from './starting-dependencies.ts';

export const cancelCreditTransfer =
  (dependencies: () => CancellationDependencies, baseUrl: () => string = publicUrl) =>
  async (event: JsonEvent): Promise<APIGatewayProxyResult> => {
    // Read first: a missing PUBLIC_URL must fail the request before anything is written.
    const location = baseUrl();
    const { tenant, clientId } = callerOf(event);
    const key = idempotencyKey(event);
    const { creditTransfer, replayed } = await cancel(dependencies(), {
      tenant,
      clientId,
      paymentId: event.pathParameters?.paymentId,
      body: event.jsonBody,
      ...(key !== undefined && { idempotencyKey: key }),
      servicer: servicerHeaders(event),
    });
    return acceptedResponse(location, creditTransfer, replayed);
  };

// The body is optional: a cancellation without a reason is a complete request.
export const handler = jsonHttpHandler(cancelCreditTransfer(cancellationDependencies), { optional: true });
