import type { APIGatewayProxyEvent } from 'aws-lambda';
import { listApprovalDecisions } from '#domain/payment-controls/decide-approval';
import { callerOf, jsonResponse } from '#shared/http-event';
import { httpHandler } from '#shared/http-handler';
import { tableStore } from './dependencies.ts';

export const listApprovals = async (event: APIGatewayProxyEvent) => {
  const { tenant } = callerOf(event);
  return jsonResponse(
    200,
    await listApprovalDecisions({ store: tableStore() }, tenant, event.pathParameters?.paymentId),
  );
};

export const handler = httpHandler(listApprovals);
