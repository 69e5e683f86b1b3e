import type { APIGatewayProxyResult } from 'aws-lambda';
import { initiateCreditTransfer as initiate } from '#domain/initiate-credit-transfer';
import { callerOf, jsonResponse } from '#shared/http-event';
import { jsonHttpHandler } from '#shared/http-handler';
import type { JsonEvent } from '#shared/middleware';
import { type ApiDependencies, apiDependencies } from './dependencies.ts';
import { idempotencyKey, servicerHeaders } from './request-headers.ts';

export const initiateCreditTransfer =
  (dependencies: () => ApiDependencies) =>
  async (event: JsonEvent): Promise<APIGatewayProxyResult> => {
    const { tenant, clientId } = callerOf(event);
    const key = idempotencyKey(event);
    const { creditTransfer, replayed } = await initiate(dependencies(), {
      tenant,
      clientId,
      body: event.jsonBody,
      ...(key !== undefined && { idempotencyKey: key }),
      servicer: servicerHeaders(event),
    });
    return jsonResponse(202, creditTransfer, {
      Location: `/v1/payments/credit-transfers/${encodeURIComponent(creditTransfer.paymentId)}/status`,
      ...(replayed && { 'Idempotent-Replayed': 'true' }),
    });
  };

export const handler = jsonHttpHandler(initiateCreditTransfer(apiDependencies));
