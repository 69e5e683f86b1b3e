import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { getCreditTransferStatus as getStatus } from '#domain/get-credit-transfer-status';
import { callerOf, jsonResponse } from '#shared/http-event';
import { httpHandler } from '#shared/http-handler';
import { type ApiDependencies, apiDependencies } from './dependencies.ts';
import { servicerHeaders } from './request-headers.ts';

export const getCreditTransferStatus =
  (dependencies: () => ApiDependencies) =>
  async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    const { tenant } = callerOf(event);
    servicerHeaders(event);
    const creditTransfer = await getStatus(dependencies(), {
      tenant,
      paymentId: event.pathParameters?.paymentId,
    });
    return jsonResponse(200, creditTransfer);
  };

export const handler = httpHandler(getCreditTransferStatus(apiDependencies));
