import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { documentClient, tableName } from '#adapters/aws/dynamodb-client';
import { DynamoDbBatchStore } from '#adapters/iso20022/batch-store';
import { batchNotification, camt054Document } from '#domain/iso20022/camt054';
import { XML_MEDIA_TYPE } from '#domain/iso20022/pain002';
import { callerOf } from '#shared/http-event';
import { httpHandler } from '#shared/http-handler';
import { servicerHeaders } from './request-headers.ts';

let batches: DynamoDbBatchStore | undefined;

/** The camt.054 debit notification of a batch: an entry per settled transfer or batch-booked group, per debtor account. */
export const getCreditTransferBatchNotification = async (
  event: APIGatewayProxyEvent,
): Promise<APIGatewayProxyResult> => {
  const { tenant } = callerOf(event);
  servicerHeaders(event);
  batches ??= new DynamoDbBatchStore(documentClient(), tableName());
  const notification = await batchNotification(batches, { tenant, batchId: event.pathParameters?.batchId });
  return {
    statusCode: 200,
    headers: { 'Content-Type': XML_MEDIA_TYPE, 'Cache-Control': 'no-store' },
    body: camt054Document(notification),
  };
};

export const handler = httpHandler(getCreditTransferBatchNotification);
