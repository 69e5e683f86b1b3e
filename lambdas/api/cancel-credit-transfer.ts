import type { APIGatewayProxyResult } from 'aws-lambda';
import {
  type CancellationDependencies,
  cancelCreditTransfer as cancel,
} from '#domain/cancel-credit-transfer';
import { callerOf } from '#shared/http-event';
import { jsonHttpHandler } from '#shared/http-handler';
import type { JsonEvent } from '#shared/middleware';
import { acceptedResponse } from './accepted-response.ts';
import { idempotencyKey, servicerHeaders } from './request-headers.ts';
import { cancellationDependencies } from './starting-dependencies.ts';

export const cancelCreditTransfer =
  (dependencies: () => CancellationDependencies) =>
  async (event: JsonEvent): Promise<APIGatewayProxyResult> => {
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
    return acceptedResponse(event, creditTransfer, replayed);
  };

// The body is optional: a cancellation without a reason is a complete request.
export const handler = jsonHttpHandler(cancelCreditTransfer(cancellationDependencies), { optional: true });
