import type { APIGatewayProxyResult } from 'aws-lambda';
import { DynamoDbLifecycleStore } from '#adapters/credit-transfer-lifecycle-store';
import { documentClient, tableName } from '#adapters/dynamodb-client';
import { workflowStarter } from '#adapters/workflow-starter';
import {
  type CancellationDependencies,
  cancelCreditTransfer as cancel,
} from '#domain/cancel-credit-transfer';
import { systemClock } from '#domain/ports';
import { callerOf, jsonResponse } from '#shared/http-event';
import { jsonHttpHandler } from '#shared/http-handler';
import type { JsonEvent } from '#shared/middleware';
import { idempotencyKey, servicerHeaders } from './request-headers.ts';

let wired: CancellationDependencies | undefined;

/** The real adapters, built once per container on first use. */
export const cancellationDependencies = (): CancellationDependencies => {
  wired ??= {
    store: new DynamoDbLifecycleStore(documentClient(), tableName()),
    clock: systemClock,
    workflow: { start: (start) => workflowStarter().start(start) },
  };
  return wired;
};

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
    return jsonResponse(202, creditTransfer, {
      Location: `/v1/payments/credit-transfers/${encodeURIComponent(creditTransfer.paymentId)}/status`,
      ...(replayed && { 'Idempotent-Replayed': 'true' }),
    });
  };

// The body is optional: a cancellation without a reason is a complete request.
export const handler = jsonHttpHandler(cancelCreditTransfer(cancellationDependencies), { optional: true });
