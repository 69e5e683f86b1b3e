import type { APIGatewayProxyEvent } from 'aws-lambda';
import { listBatchApprovalDecisions } from '#domain/payment-controls/list-batch-approvals';
import { callerOf, jsonResponse } from '#shared/http-event';
import { httpHandler } from '#shared/http-handler';
import { batchStore } from './batch-dependencies.ts';

export const listBatchApprovals = async (event: APIGatewayProxyEvent) => {
  const { tenant } = callerOf(event);
  return jsonResponse(
    200,
    await listBatchApprovalDecisions(batchStore(), {
      tenant,
      batchId: event.pathParameters?.batchId,
      cursor: event.queryStringParameters?.cursor,
    }),
  );
};

export const handler = httpHandler(listBatchApprovals);
