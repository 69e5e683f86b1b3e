import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { documentClient, tableName } from '#adapters/aws/dynamodb-client';
import { DynamoDbCreditTransferStore } from '#adapters/credit-transfers/credit-transfer-store';
import { camt054Document, transferNotification } from '#domain/iso20022/camt054';
import { XML_MEDIA_TYPE } from '#domain/iso20022/pain002';
import { callerOf } from '#shared/http-event';
import { httpHandler } from '#shared/http-handler';
import { servicerHeaders } from './request-headers.ts';

let store: DynamoDbCreditTransferStore | undefined;

/** The camt.054 debit notification of one transfer: its entry once settled, none before. */
export const getCreditTransferNotification = async (
  event: APIGatewayProxyEvent,
): Promise<APIGatewayProxyResult> => {
  const { tenant } = callerOf(event);
  servicerHeaders(event);
  store ??= new DynamoDbCreditTransferStore(documentClient(), tableName());
  const notification = await transferNotification(store, {
    tenant,
    paymentId: event.pathParameters?.paymentId,
  });
  return {
    statusCode: 200,
    headers: { 'Content-Type': XML_MEDIA_TYPE, 'Cache-Control': 'no-store' },
    body: camt054Document(notification),
  };
};

export const handler = httpHandler(getCreditTransferNotification);
