import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { documentClient, tableName } from '#adapters/aws/dynamodb-client';
import { DynamoDbBatchList } from '#adapters/iso20022/batch-list';
import { listBatches } from '#domain/iso20022/list-batches';
import { callerOf, jsonResponse } from '#shared/http-event';
import { httpHandler } from '#shared/http-handler';
import { listCursorKey } from './list-cursor-key.ts';
import { queryParameters } from './query-string.ts';
import { servicerHeaders } from './request-headers.ts';

let batches: DynamoDbBatchList | undefined;

export const listCreditTransferBatches = async (
  event: APIGatewayProxyEvent,
): Promise<APIGatewayProxyResult> => {
  const { tenant } = callerOf(event);
  servicerHeaders(event);
  batches ??= new DynamoDbBatchList(documentClient(), tableName());
  const page = await listBatches({ batches, cursorKey: listCursorKey }, tenant, queryParameters(event));
  return jsonResponse(200, page.batches, { 'Pagination-Cursor': page.nextCursor });
};

export const handler = httpHandler(listCreditTransferBatches);
