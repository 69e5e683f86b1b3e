import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { batchStatusReport, getBatchPage } from '#domain/iso20022/batch-view';
import { pain002Document, XML_MEDIA_TYPE } from '#domain/iso20022/pain002';
import type { BatchStore } from '#domain/iso20022/ports';
import { callerOf, jsonResponse } from '#shared/http-event';
import { httpHandler } from '#shared/http-handler';
import { batchStore } from './batch-dependencies.ts';
import { prefersXml } from './content-negotiation.ts';
import { servicerHeaders } from './request-headers.ts';

export const getCreditTransferBatch =
  (batches: () => BatchStore) =>
  async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    const { tenant } = callerOf(event);
    servicerHeaders(event);
    const batchId = event.pathParameters?.batchId;
    if (prefersXml(event)) {
      const report = await batchStatusReport(batches(), { tenant, batchId });
      return {
        statusCode: 200,
        headers: { 'Content-Type': XML_MEDIA_TYPE, 'Cache-Control': 'no-store', Vary: 'Accept' },
        body: pain002Document(report),
      };
    }
    const page = await getBatchPage(batches(), {
      tenant,
      batchId,
      cursor: event.queryStringParameters?.cursor,
    });
    return jsonResponse(200, page, { Vary: 'Accept' });
  };

export const handler = httpHandler(getCreditTransferBatch(batchStore));
